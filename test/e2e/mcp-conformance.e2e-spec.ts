/**
 * The official MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance client`)
 * against the service's own MCP client and OAuth code, driven through
 * scripts/mcp-conformance-client.ts: `initialize`, `tools_call` and every `auth/*` scenario of the
 * 2025-06-18 and 2025-11-25 revisions, as the suite itself lists them. Each scenario passes when the
 * suite's own result (its checks.json) has no failed check and no warning, as the suite judges it, and
 * the suite says OVERALL: PASSED. The command sets the service's MCP_CLIENT_METADATA_URL to the suite's
 * example document URL (auth/basic-cimd); Basic credentials go with the WHATWG form encoding, which the
 * suite's server reads without decoding (auth/pre-registration).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { testEnv } from '../setup/shared-runtime.js';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = path.resolve(DIST, '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const COMMAND = `${process.execPath} ${path.join(DIST, 'scripts', 'mcp-conformance-client.js')}`;
const REVISIONS = ['2025-06-18', '2025-11-25'];

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  description: string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

/** The client scenarios the suite lists for a revision (`list --client --spec-version`). */
function listed(revision: string): string[] {
  const answer = spawnSync(process.execPath, [SUITE, 'list', '--client', '--spec-version', revision], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (answer.status !== 0) {
    throw new Error(`the conformance suite's list failed (${answer.status}): ${answer.stderr}`);
  }
  return [...answer.stdout.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]!);
}

const ALL = [...new Set(REVISIONS.flatMap(listed))];
const WANTED = ALL.filter((name) => name === 'initialize' || name === 'tools_call' || name.startsWith('auth/'));

/** Every checks.json under `dir` (the suite writes `<dir>/<scenario>-<time>/checks.json`, the scenario's `/` a folder). */
function checksFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      return checksFiles(full);
    }
    return entry === 'checks.json' ? [full] : [];
  });
}

/** Runs one scenario through the suite; resolves with its exit status, its output and its checks. */
function runScenario(scenario: string): Promise<{ code: number | null; output: string; checks: Check[] }> {
  const out = mkdtempSync(path.join(testEnv('workDir'), 'mcp-conformance-'));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [SUITE, 'client', '--command', COMMAND, '--scenario', scenario, '--timeout', '30000', '-o', out],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const files = checksFiles(out);
      const checks = files.flatMap((file) => JSON.parse(readFileSync(file, 'utf8')) as Check[]);
      resolve({ code, output, checks });
    });
  });
}

describe('the MCP conformance suite, client scenarios, through the service', () => {
  it('lists the scenarios to run from the suite, the auth ones all of them', () => {
    expect(WANTED).toEqual(expect.arrayContaining(['initialize', 'tools_call', 'auth/metadata-default']));
    expect(WANTED.filter((name) => name.startsWith('auth/')).length).toBeGreaterThanOrEqual(10);
    // The two that once needed the suite's metadata document URL and undecoded Basic credentials.
    expect(WANTED).toEqual(expect.arrayContaining(['auth/basic-cimd', 'auth/pre-registration']));
  });

  it.each(WANTED)(
    '%s passes',
    async (scenario) => {
      const run = await runScenario(scenario);
      const problems = run.checks
        .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
        .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
      expect({ problems, succeeded: run.checks.some((c) => c.status === 'SUCCESS') }).toEqual({
        problems: [],
        succeeded: true,
      });
      // The suite's own verdict, the command's exit status included.
      if (run.code !== 0 || !run.output.includes('OVERALL: PASSED')) {
        throw new Error(`the suite did not pass ${scenario} (exit ${run.code}):\n${run.output}`);
      }
    },
    60_000,
  );
});
