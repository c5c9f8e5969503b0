/** Nesting depth of a JSON value, measured without recursion; stops counting at `stopAt`. */
export function jsonDepth(value: unknown, stopAt: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) {
      continue;
    }
    deepest = Math.max(deepest, depth);
    if (deepest >= stopAt) {
      return deepest;
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/**
 * The path (`a.b[2]`) of the first string, or object key, holding a NUL character, or undefined.
 * PostgreSQL stores neither `text` nor `jsonb` with U+0000, so such input is refused up front
 * instead of failing (500) at the INSERT. Called after the depth check, so the walk is bounded.
 */
export function nulCharacterPath(value: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) {
        return path || 'body';
      }
      continue;
    }
    if (typeof current !== 'object' || current === null) {
      continue;
    }
    if (Array.isArray(current)) {
      current.forEach((child, index) => stack.push([child, `${path}[${index}]`]));
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (key.includes('\u0000')) {
        return childPath;
      }
      stack.push([child, childPath]);
    }
  }
  return undefined;
}
