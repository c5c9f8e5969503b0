import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The service's version, from package.json (found by walking up from this file, in src or dist). */
export function readPackageVersion(): string {
  if (cached !== undefined) {
    return cached;
  }
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'agentsite' && pkg.version) {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // not here; look one level up
    }
    dir = path.dirname(dir);
  }
  cached = '0.0.0';
  return cached;
}
