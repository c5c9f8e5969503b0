/**
 * Build step: removes from dist/ the compiled files whose source was deleted (scripts/runtime/clean-dist.ts),
 * so a deleted test, migration or workflow no longer runs. Run after tsc, before the bundles.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { answerHelp } from './runtime/command-line.js';
import { removeOrphans } from './runtime/clean-dist.js';

answerHelp(
  'usage: node dist/scripts/clean-dist.js   (a step of npm run build, after tsc)\n' +
    "Removes from dist/ the compiled .js and .js.map files whose source is gone (tsconfig.json's roots);\n" +
    'keeps the console and workflow bundles, the OpenAPI document and tsc’s incremental state.',
);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { compilerOptions, include } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as {
  compilerOptions: { outDir: string };
  include: string[];
};
const removed = removeOrphans(path.join(root, compilerOptions.outDir), root, include);
if (removed.length > 0) {
  console.log(
    `dist: ${removed.length} compiled file(s) without a source removed (${removed.slice(0, 5).join(', ')}${removed.length > 5 ? ', …' : ''})`,
  );
}
