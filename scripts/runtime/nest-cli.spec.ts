import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { readNestCli } from './nest-cli.js';

/** dist/scripts/runtime → the repository. */
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('nest-cli.json, as npm run dev reads it', () => {
  it("names the project's build tsconfig and the API's entry point, both existing", () => {
    const config = readNestCli(path.join(repo, 'nest-cli.json'));
    expect(existsSync(path.join(repo, config.tsConfigPath))).toBe(true);
    expect(existsSync(path.join(repo, `${config.entryFile}.ts`))).toBe(true);
    expect(existsSync(path.join(repo, path.dirname(config.entryFile), 'worker.ts'))).toBe(true);
  });

  it('refuses what would break the build: another builder, a deleted dist/, no entry point', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nest-cli-')), 'nest-cli.json');
    writeFileSync(file, JSON.stringify({ compilerOptions: { builder: 'swc', deleteOutDir: true } }));
    expect(() => readNestCli(file)).toThrow(
      /entryFile.*tsConfigPath.*builder must be "tsc".*deleteOutDir must be false/,
    );
  });
});
