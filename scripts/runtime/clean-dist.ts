/**
 * The build's clean step: removes from the output directory the compiled files whose source is gone.
 * tsc never deletes what it wrote, so without this a deleted test, migration or workflow would still
 * be in dist/ and still run (jest runs dist/test, the data source loads dist/src/database/migrations).
 *
 * Only `.js` and `.js.map` files under the compiled roots (tsconfig's `include`: dist/src, dist/test,
 * …) are candidates; everything else in dist/ is kept: the console bundle (dist/console), the workflow
 * bundles and the OpenAPI document (files at the top of dist/, made by later build steps), tsc's
 * incremental state (.tsbuildinfo*). Emptied directories go too. Removing dist/ whole would not do:
 * tsc's incremental state would say every file is up to date and emit nothing.
 */
import { existsSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';

/** The source extensions a compiled `.js` may come from (tsc without allowJs). */
const SOURCE_EXTENSIONS = ['.ts', '.tsx'];

/** The source of a compiled file, relative to the roots' parent; undefined when it is not a compiled file. */
function sourceCandidates(compiled: string): string[] | undefined {
  const js = compiled.endsWith('.js.map') ? compiled.slice(0, -'.map'.length) : compiled;
  if (!js.endsWith('.js')) {
    return undefined;
  }
  const stem = js.slice(0, -'.js'.length);
  return SOURCE_EXTENSIONS.map((extension) => stem + extension);
}

/** Removes the orphans under one directory, depth first; true when the directory ended empty. */
function clean(outDir: string, rootDir: string, relative: string, removed: string[]): boolean {
  const dir = path.join(outDir, relative);
  let left = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = path.join(relative, entry.name);
    if (entry.isDirectory()) {
      if (clean(outDir, rootDir, child, removed)) {
        rmdirSync(path.join(outDir, child));
      } else {
        left += 1;
      }
      continue;
    }
    const sources = sourceCandidates(child);
    if (sources !== undefined && !sources.some((source) => existsSync(path.join(rootDir, source)))) {
      unlinkSync(path.join(outDir, child));
      removed.push(child);
    } else {
      left += 1;
    }
  }
  return left === 0;
}

/**
 * Removes, under `outDir/<root>` for each compiled root, every `.js`/`.js.map` whose `.ts`/`.tsx`
 * is missing from `rootDir/<root>`, and the directories left empty. Returns the removed files
 * (relative to outDir).
 */
export function removeOrphans(outDir: string, rootDir: string, roots: string[]): string[] {
  const removed: string[] = [];
  for (const root of roots) {
    if (existsSync(path.join(outDir, root)) && clean(outDir, rootDir, root, removed)) {
      rmdirSync(path.join(outDir, root));
    }
  }
  return removed.sort();
}
