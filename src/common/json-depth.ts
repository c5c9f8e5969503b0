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
