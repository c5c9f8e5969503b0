import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The operator commands a user runs by hand, and a line their usage must show. */
const COMMANDS: Array<[string, RegExp]> = [
  ['agentsite-check.js', /usage: agentsite-check <site URL>/],
  ['admin.js', /grant <email>/],
  ['vault-rotate.js', /usage: npm run vault:rotate/],
  ['migrations.js', /npm run migration:generate -- <Name>/],
];

describe('--help', () => {
  it.each(COMMANDS)('%s --help prints its usage on standard output and exits 0, touching nothing', (file, usage) => {
    // No settings, no database: help is answered before either is needed.
    const answer = spawnSync(process.execPath, [path.join(HERE, file), '--help'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
      timeout: 30_000,
    });
    expect({ status: answer.status, stderr: answer.stderr }).toEqual({ status: 0, stderr: '' });
    expect(answer.stdout).toMatch(usage);
  });
});
