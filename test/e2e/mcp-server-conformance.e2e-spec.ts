/**
 * The official MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance server`)
 * against the real stack's /mcp, driven through scripts/mcp-server-conformance.ts (a loopback proxy
 * adds the bearer token the suite cannot send: an OAuth access token obtained as a third-party client
 * would, through consent, and an API token with MCP_ALLOW_API_TOKENS=true). Every scenario the suite lists is either run here or
 * left out with its reason (scripts/mcp-server-conformance/scenarios.ts: fixture tools, resources and
 * prompts of fixed names, features the endpoint does not offer). A scenario passes when the suite's
 * own checks.json has no failed check and no warning, and the suite's exit status is 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LEFT_OUT, OFFERED } from '../../scripts/mcp-server-conformance/scenarios.js';
import { consentedToken } from '../fixtures/mcp-client/consent.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = path.resolve(DIST, '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const COMMAND = path.join(DIST, 'scripts', 'mcp-server-conformance.js');

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  description: string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

interface Outcome {
  code: number | null;
  output: string;
  checks: Check[];
}

/** The server scenarios the suite lists (`list --server`). */
function listed(): string[] {
  const answer = spawnSync(process.execPath, [SUITE, 'list', '--server'], { encoding: 'utf8', timeout: 30_000 });
  if (answer.status !== 0) {
    throw new Error(`the conformance suite's list failed (${answer.status}): ${answer.stderr}`);
  }
  return [...answer.stdout.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]!);
}

/** Every checks.json under `dir` (the suite writes `<dir>/<scenario>-<time>/checks.json`). */
function checksFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      return checksFiles(full);
    }
    return entry === 'checks.json' ? [full] : [];
  });
}

function collect(child: ReturnType<typeof spawn>, out: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const checks = checksFiles(out).flatMap((file) => JSON.parse(readFileSync(file, 'utf8')) as Check[]);
      resolve({ code, output, checks });
    });
  });
}

/** One scenario through the command (its proxy sends `token`). */
function throughCommand(url: string, token: string, scenario: string): Promise<Outcome> {
  const out = mkdtempSync(path.join(testEnv('workDir'), 'mcp-server-conformance-'));
  const child = spawn(process.execPath, [COMMAND, '--url', url, '--scenario', scenario, '-o', out], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, MCP_CONFORMANCE_TOKEN: token },
  });
  return collect(child, out);
}

/** One scenario through the suite alone, straight at `url` (no token). */
function direct(url: string, scenario: string): Promise<Outcome> {
  const out = mkdtempSync(path.join(testEnv('workDir'), 'mcp-server-conformance-'));
  const child = spawn(process.execPath, [SUITE, 'server', '--url', url, '--scenario', scenario, '-o', out], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, out);
}

function expectPassed(scenario: string, run: Outcome): void {
  const problems = run.checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
  expect({ problems, succeeded: run.checks.some((c) => c.status === 'SUCCESS') }).toEqual({
    problems: [],
    succeeded: true,
  });
  if (run.code !== 0) {
    throw new Error(`the suite did not pass ${scenario} (exit ${run.code}):\n${run.output}`);
  }
}

describe('the MCP conformance suite, server scenarios, against /mcp (e2e)', () => {
  let world: World;
  let user: TestUser;
  let endpoint: string;
  /** The bearer token of each kind /mcp accepts. */
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    world = await startWorld({ worker: false, env: { MCP_ALLOW_API_TOKENS: 'true' } });
    endpoint = `${world.stack.baseUrl}/mcp`;
    user = await registerUser(world.http);
    // A connected site, so the tools listed are the workspace's real ones.
    const added = await world.http.post('/api/vault/sites', { url: world.site.url }, { token: user.token });
    expect(added.status).toBe(201);
    const token = await world.http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: world.site.issueApiToken('alice').token },
      { token: user.token },
    );
    expect(token.status).toBeLessThan(300);
    tokens['an OAuth access token'] = (await consentedToken(world.stack.baseUrl, user.token)).accessToken;
    tokens['an API token (MCP_ALLOW_API_TOKENS=true)'] = user.token;
  });

  afterAll(async () => {
    await world?.stop();
  });

  it('accounts for every server scenario the suite lists: run here, or left out with a reason', () => {
    const all = listed();
    expect(all.length).toBeGreaterThanOrEqual(30);
    expect([...OFFERED, ...Object.keys(LEFT_OUT)].sort()).toEqual([...all].sort());
    expect(OFFERED.filter((name) => name in LEFT_OUT)).toEqual([]);
  });

  it('fails server-initialize without a token: the endpoint has no unauthenticated mode', async () => {
    const run = await direct(endpoint, 'server-initialize');
    expect(run.checks).toEqual([
      expect.objectContaining({
        id: 'server-initialize',
        status: 'FAILURE',
        errorMessage: expect.stringMatching(/401/),
      }),
    ]);
    expect(run.code).toBe(1);
  }, 60_000);

  const KINDS = ['an OAuth access token', 'an API token (MCP_ALLOW_API_TOKENS=true)'];
  it.each(KINDS.flatMap((kind) => OFFERED.map((scenario) => [scenario, kind])))(
    '%s passes with %s',
    async (scenario, kind) => {
      const run = await throughCommand(endpoint, tokens[kind]!, scenario!);
      expectPassed(scenario!, run);
      if (scenario === 'tools-list') {
        // The workspace's site tools, not an empty list.
        const listedTools = run.checks.find((c) => c.id === 'tools-list')?.details?.tools as string[];
        expect(listedTools).toEqual(expect.arrayContaining([expect.stringMatching(/__search_notes$/)]));
      }
    },
    60_000,
  );
});
