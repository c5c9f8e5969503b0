/**
 * nest-cli.json is where the project says how it is compiled and what the API's entry point is, in
 * the Nest CLI's own format (so `npx @nestjs/cli start` would build and run the API the same way).
 * `npm run dev` reads it: `compilerOptions.tsConfigPath` is the project `tsc --watch` compiles, and
 * `entryFile` (below tsc's outDir, dist/) the API it restarts. The worker has no key there: its entry
 * is always src/worker beside it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface NestCliConfig {
  /** The TypeScript project the service is compiled with (tsconfig.build.json). */
  tsConfigPath: string;
  /** The API's entry point below dist/, without extension (src/main). */
  entryFile: string;
}

export function readNestCli(file = path.resolve('nest-cli.json')): NestCliConfig {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as {
    entryFile?: unknown;
    compilerOptions?: { builder?: unknown; tsConfigPath?: unknown; deleteOutDir?: unknown };
  };
  const problems: string[] = [];
  const options = raw.compilerOptions ?? {};
  if (typeof raw.entryFile !== 'string' || raw.entryFile === '') {
    problems.push('entryFile must name the API entry point (src/main)');
  }
  if (typeof options.tsConfigPath !== 'string' || options.tsConfigPath === '') {
    problems.push('compilerOptions.tsConfigPath must name the tsconfig the service is built with');
  }
  if (options.builder !== undefined && options.builder !== 'tsc') {
    problems.push('compilerOptions.builder must be "tsc": the tests and `npm start` run what tsc emits');
  }
  if (options.deleteOutDir !== false) {
    problems.push('compilerOptions.deleteOutDir must be false: dist/ also holds the workflow bundle and the console');
  }
  if (problems.length > 0) {
    throw new Error(`${file}: ${problems.join('; ')}`);
  }
  return { tsConfigPath: options.tsConfigPath as string, entryFile: raw.entryFile as string };
}
