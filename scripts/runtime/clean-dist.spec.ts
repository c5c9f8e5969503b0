import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { removeOrphans } from './clean-dist.js';

/** The repository root: jest runs in it. */
const REPO = process.cwd();
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function tsc(project: string): void {
  const answer = spawnSync(process.execPath, [TSC, '-p', path.join(project, 'tsconfig.json')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect({ status: answer.status, stdout: answer.stdout }).toEqual({ status: 0, stdout: '' });
}

describe('the build’s clean step (compiled files whose source is gone)', () => {
  let project: string | undefined;
  afterEach(() => {
    if (project !== undefined) {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('removes what tsc compiled from a deleted source, and keeps the rest of dist/', () => {
    project = mkdtempSync(path.join(tmpdir(), 'clean-dist-'));
    const dist = path.join(project, 'dist');
    // The project's shape: incremental tsc into dist/ with source maps, several roots.
    write(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: [],
          sourceMap: true,
          rootDir: '.',
          outDir: 'dist',
          incremental: true,
          tsBuildInfoFile: 'dist/.tsbuildinfo',
        },
        include: ['src', 'test'],
      }),
    );
    write(path.join(project, 'src', 'kept.ts'), 'export const kept = 1;\n');
    write(path.join(project, 'src', 'database', 'migrations', '1-deleted.ts'), 'export const migration = 1;\n');
    write(path.join(project, 'test', 'e2e', 'old.e2e-spec.ts'), 'export const old = 1;\n');
    tsc(project);
    // What later build steps put in dist/, and a file under a root that no tsc wrote.
    write(path.join(dist, 'console', 'index.js'), 'console bundle');
    write(path.join(dist, 'workflow-bundle.js'), 'workflow bundle');
    write(path.join(dist, 'openapi.json'), '{}');
    write(path.join(dist, 'src', 'notes.txt'), 'not compiled');
    expect(existsSync(path.join(dist, 'src', 'database', 'migrations', '1-deleted.js'))).toBe(true);

    rmSync(path.join(project, 'src', 'database'), { recursive: true });
    rmSync(path.join(project, 'test'), { recursive: true });
    tsc(project);
    // tsc alone leaves them: the deleted migration and test would still load and run from dist/.
    expect(existsSync(path.join(dist, 'src', 'database', 'migrations', '1-deleted.js'))).toBe(true);
    expect(existsSync(path.join(dist, 'test', 'e2e', 'old.e2e-spec.js'))).toBe(true);

    expect(removeOrphans(dist, project, ['src', 'test', 'bench'])).toEqual([
      path.join('src', 'database', 'migrations', '1-deleted.js'),
      path.join('src', 'database', 'migrations', '1-deleted.js.map'),
      path.join('test', 'e2e', 'old.e2e-spec.js'),
      path.join('test', 'e2e', 'old.e2e-spec.js.map'),
    ]);
    expect(existsSync(path.join(dist, 'src', 'database'))).toBe(false);
    expect(existsSync(path.join(dist, 'test'))).toBe(false);
    for (const kept of [
      'src/kept.js',
      'src/kept.js.map',
      'src/notes.txt',
      'console/index.js',
      'workflow-bundle.js',
      'openapi.json',
      '.tsbuildinfo',
    ]) {
      expect([kept, existsSync(path.join(dist, kept))]).toEqual([kept, true]);
    }
    // A second pass finds nothing, and tsc's incremental build still has its outputs.
    expect(removeOrphans(dist, project, ['src', 'test'])).toEqual([]);
    write(path.join(project, 'src', 'kept.ts'), 'export const kept = 2;\n');
    tsc(project);
    expect(readFileSync(path.join(dist, 'src', 'kept.js'), 'utf8')).toContain('kept = 2');
  });

  it('runs after every tsc that writes dist/ in the npm scripts, before anything runs from it', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const emitting = Object.entries(scripts).flatMap(([name, command]) =>
      command
        .split('&&')
        .map((step, index, steps) => ({ name, step: step.trim(), next: steps[index + 1]?.trim() }))
        .filter(({ step }) => /tsc -p tsconfig(\.build)?\.json"?$/.test(step)),
    );
    expect(emitting.map(({ name }) => name)).toEqual(expect.arrayContaining(['build', 'build:all', 'test:unit']));
    expect(emitting.filter(({ next }) => next?.replace(/"$/, '') !== 'node dist/scripts/clean-dist.js')).toEqual([]);
  });
});
