/**
 * The official MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance client`)
 * against the service's own MCP client and OAuth code, driven through
 * scripts/mcp-conformance-client.ts: `initialize`, `tools_call` and every `auth/*` scenario of the
 * 2025-06-18 and 2025-11-25 revisions, as the suite itself lists them. Each scenario passes when the
 * suite's own result (its checks.json) has no failed check and no warning, as the suite judges it, and
 * the suite says OVERALL: PASSED. The two scenarios the service cannot pass as it is (LEFT_OUT) are run
 * too, and checked to fail for their stated reason only.
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

/**
 * Scenarios of those revisions left out of "passes", each with the reason; the tests at the end check
 * that the suite still lists them and that each fails for that reason and no other.
 */
const LEFT_OUT: Record<string, string> = {
  // The service's Client ID Metadata Document is its own, at PUBLIC_BASE_URL + /api/oauth/client-metadata
  // (src/oauth/mcp-oauth-clients.ts), and the service uses it as client_id whenever the authorization
  // server supports it; the scenario accepts only the suite's example URL
  // (https://conformance-test.local/client-metadata.json) and warns on any other.
  'auth/basic-cimd': "the client_id is the service's own metadata document URL, not the suite's example one",
  // The service authenticates with client_secret_basic through openid-client, which form-encodes the
  // client id and secret before Basic (RFC 6749 §2.3.1: "pre-registered-client" → "pre%2Dregistered%2Dclient");
  // the scenario's authorization server compares them without decoding.
  'auth/pre-registration':
    'the HTTP Basic credentials are form-encoded (RFC 6749 §2.3.1); the suite does not decode them',
};

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
const SCENARIOS = WANTED.filter((name) => LEFT_OUT[name] === undefined);

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
  it('lists the scenarios to run from the suite, and every scenario left out is still one of them', () => {
    expect(WANTED).toEqual(expect.arrayContaining(['initialize', 'tools_call', 'auth/metadata-default']));
    expect(WANTED.filter((name) => name.startsWith('auth/')).length).toBeGreaterThanOrEqual(10);
    expect(Object.keys(LEFT_OUT).filter((name) => !WANTED.includes(name))).toEqual([]);
  });

  it.each(SCENARIOS)(
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
  /** What the suite did not accept of a run: each failed or warned check's id and details. */
  const refusedOf = (checks: Check[]) =>
    checks
      .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
      .map((c) => ({ id: c.id, details: c.details }));

  it('auth/basic-cimd: the service uses its own Client ID Metadata Document as client_id, which is all the suite refuses', async () => {
    const run = await runScenario('auth/basic-cimd');
    expect(refusedOf(run.checks)).toEqual([
      {
        id: 'cimd-client-id-used',
        details: {
          expectedClientId: 'https://conformance-test.local/client-metadata.json',
          actualClientId: 'https://agentsite.conformance.invalid/api/oauth/client-metadata',
        },
      },
    ]);
    expect(run.checks.filter((c) => c.status === 'SUCCESS').map((c) => c.id)).toEqual(
      expect.arrayContaining(['authorization-request', 'token-request', 'pkce-verifier-matches-challenge']),
    );
  }, 60_000);

  it('auth/pre-registration: the configured client is used (no registration), its Basic credentials form-encoded', async () => {
    const run = await runScenario('auth/pre-registration');
    expect(refusedOf(run.checks)).toEqual([
      {
        id: 'pre-registration-auth',
        details: { expectedClientId: 'pre-registered-client', actualClientId: 'pre%2Dregistered%2Dclient' },
      },
    ]);
    const authorize = run.checks.find((c) => c.id === 'authorization-request');
    expect((authorize?.details?.query as Record<string, string> | undefined)?.client_id).toBe('pre-registered-client');
    expect(run.checks.some((c) => c.id === 'client-registration')).toBe(false);
  }, 60_000);
});
