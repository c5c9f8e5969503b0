import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Every command under scripts/ (operator commands, the run and build steps), and a line its usage must show. */
const COMMANDS: Array<[string, RegExp]> = [
  ['agentsite-check.js', /usage: agentsite-check <site URL>/],
  ['admin.js', /grant <email>/],
  ['vault-rotate.js', /usage: npm run vault:rotate/],
  ['migrations.js', /npm run migration:generate -- <Name>/],
  ['start.js', /^usage: npm start .*\n(.|\n)*--services-only/],
  ['dev.js', /^usage: npm run dev .*\n(.|\n)*--no-tsc/],
  ['run-tests.js', /^usage: node dist\/scripts\/run-tests\.js/],
  ['temporal-cli.js', /^usage: npm run temporal:install/],
  ['chromium.js', /^usage: npm run chromium:install/],
  ['stripe-mock.js', /^usage: npm run stripe-mock:install/],
  ['bundle-workflows.js', /^usage: node dist\/scripts\/bundle-workflows\.js/],
  ['clean-dist.js', /^usage: node dist\/scripts\/clean-dist\.js/],
  ['openapi-document.js', /^usage: node dist\/scripts\/openapi-document\.js/],
  ['record-histories.js', /^usage: node dist\/scripts\/record-histories\.js/],
  ['screenshots.js', /^usage: node dist\/scripts\/screenshots\.js/],
  ['mcp-conformance-client.js', /^usage: node dist\/scripts\/mcp-conformance-client\.js <MCP server URL>/],
  ['mcp-server-conformance.js', /^usage: node dist\/scripts\/mcp-server-conformance\.js --url <MCP endpoint URL>/],
  // The launcher of the run scripts: plain JavaScript beside the sources, run before any build.
  ['../../scripts/pinned-node.mjs', /^usage: node scripts\/pinned-node\.mjs/],
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

  it('every command under scripts/ is in this list', () => {
    const commands = readdirSync(HERE).filter((file) => file.endsWith('.js') && !file.endsWith('.spec.js'));
    expect(commands.filter((file) => !COMMANDS.some(([listed]) => listed === file))).toEqual([]);
  });
});
