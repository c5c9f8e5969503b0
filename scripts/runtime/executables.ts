import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** A file this process may run. */
export function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first `name` on PATH that this process may run. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && executable(candidate)) {
      return candidate;
    }
  }
  return undefined;
}
