import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ReferenceSite, SiteFaults } from '../../examples/site/site.js';
import { createTestCa, issueServerCert } from '../../examples/site/tls.js';
import type { ConformanceReport, RuleResult } from '../../src/conformance/conformance-report.js';
import { CHECKS_PER_WINDOW } from '../../src/conformance/conformance.service.js';
import { MANIFEST_SCHEMA } from '../../src/sites/manifest.js';
import { expectError, Http } from '../utils/http.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser } from '../utils/users.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'agentsite-check.js');
const REDIRECT_URI = 'https://client.example/api/oauth/callback';
// Low enough that a burst reaches it quickly, above the seven tools' own calls.
const SITE_OPTIONS = { limitPerToken: 20, limitPerIp: 100_000 };

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The test account's password reaches the CLI as a site author's would: in the environment (default) or on stdin. */
function runCli(
  args: string[],
  options: { password?: string | undefined; stdin?: string } = { password: 'root-password' },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.AGENTSITE_CHECK_PASSWORD;
    if (options.password !== undefined) {
      env.AGENTSITE_CHECK_PASSWORD = options.password;
    }
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env,
    });
    if (options.stdin !== undefined) {
      child.stdin!.end(options.stdin);
    }
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function rule(report: ConformanceReport, id: string): RuleResult {
  const found = report.rules.find((r) => r.id === id);
  if (found === undefined) {
    throw new Error(`no rule ${id} in ${report.rules.map((r) => r.id).join(', ')}`);
  }
  return found;
}

describe('conformance checker: agentsite-check and POST /api/conformance/check (e2e)', () => {
  let sites: TestSites;
  let site: ReferenceSite;

  function cliArgs(target: ReferenceSite, ...extra: string[]): string[] {
    return [
      target.url,
      '--ca',
      sites.caFile,
      '--allow-private',
      '--user',
      'root',
      '--redirect-uri',
      REDIRECT_URI,
      '--json',
      ...extra,
    ];
  }

  beforeAll(async () => {
    sites = await testSites();
    site = await sites.start(SITE_OPTIONS);
    site.allowRedirect('agentsite', REDIRECT_URI);
  });

  afterAll(async () => {
    await sites?.stopAll();
  });

  it('passes every rule against the reference site: exit 0, a JSON report and a table', async () => {
    const run = await runCli(cliArgs(site));
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as ConformanceReport;
    expect(report.rules.filter((r) => r.status !== 'pass')).toEqual([]);
    expect(run.code).toBe(0);
    expect(report.passed).toBe(true);
    const ids = report.rules.map((r) => r.id);
    for (const id of [
      'https',
      'manifest.reachable',
      'manifest.schema',
      'oauth.pkce',
      'oauth.redirect-uri',
      'oauth.state',
      'oauth.token',
      'oauth.refresh-rotation',
      'tools.rate-limit',
      'tools.search_notes.unauthorized',
      'tools.search_notes.input',
      'tools.search_notes.json',
      'tools.manage_users.input',
    ]) {
      expect(ids).toContain(id);
    }
    expect(report.counts).toEqual({ pass: report.rules.length, fail: 0, skipped: 0 });

    const table = await runCli(cliArgs(site).filter((a) => a !== '--json'));
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^PASS {2}oauth\.refresh-rotation/m);
    expect(table.stdout).toContain(`${report.rules.length} passed, 0 failed, 0 skipped`);
  });

  const FAULTS: Array<[keyof SiteFaults, string, RegExp]> = [
    ['invalidManifest', 'manifest.schema', /description: is required; tools\[0\]\.name: must match pattern/],
    [
      'plainTextUnauthorized',
      'tools.search_notes.unauthorized',
      /the 401 answer is not JSON with a string "error" \(text\/plain/,
    ],
    ['refuseDeclaredInput', 'tools.create_note.input', /^HTTP 400: Missing field "workspace"$/],
    ['htmlResults', 'tools.list_notes.json', /^HTTP 200 answered text\/html/],
    ['rateLimitWithoutRetryAfter', 'tools.rate-limit', /answered 429 without Retry-After/],
    ['pkceOptional', 'oauth.pkce', /accepted an authorization request without code_challenge/],
    [
      'pkceNotVerified',
      'oauth.pkce',
      /a wrong code_verifier was answered HTTP 200 with access_token.*not 400 invalid_grant/,
    ],
    [
      'redirectUriPrefix',
      'oauth.redirect-uri',
      /accepted redirect_uri https:\/\/client\.example\/api\/oauth\/callbackx/,
    ],
    ['stateAltered', 'oauth.state', /the redirect carried state "[\w-]{16}" instead of/],
    [
      'tokenWithoutType',
      'oauth.token',
      /the code exchange answered HTTP 200 with access_token, expires_in, refresh_token/,
    ],
    ['noRefreshRotation', 'oauth.refresh-rotation', /did not return a new refresh_token \(no rotation\)/],
  ];

  it.each(FAULTS)('fault %s fails rule %s with its own message and a fix hint (exit 1)', async (fault, id, message) => {
    site.faults = { [fault]: true };
    try {
      const run = await runCli(cliArgs(site));
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as ConformanceReport;
      const failed = rule(report, id);
      expect(failed.status).toBe('fail');
      expect(failed.message).toMatch(message);
      expect(failed.hint).toEqual(expect.any(String));
      expect(report.passed).toBe(false);
      // The message is the fault's own: no other fault's message appears in this report.
      for (const [otherFault, , otherMessage] of FAULTS) {
        if (otherFault !== fault) {
          expect(report.rules.filter((r) => otherMessage.test(r.message))).toEqual([]);
        }
      }
    } finally {
      site.faults = {};
    }
  });

  it('fails the manifest rule for a manifest that is not JSON, and the HTTPS rule for an untrusted certificate', async () => {
    site.manifestOverride = { raw: '<html>hello</html>' };
    try {
      const run = await runCli(cliArgs(site));
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as ConformanceReport;
      expect(rule(report, 'manifest.reachable')).toMatchObject({
        status: 'fail',
        message: expect.stringMatching(/is not JSON: <html>hello/),
      });
      expect(rule(report, 'manifest.schema')).toMatchObject({ status: 'skipped', message: 'no manifest to validate' });
    } finally {
      site.manifestOverride = undefined;
    }

    const otherCa = await createTestCa('a CA nobody trusts');
    const untrusted = await sites.start({ ...SITE_OPTIONS, tls: await issueServerCert(otherCa) });
    const run = await runCli(cliArgs(untrusted));
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as ConformanceReport;
    expect(rule(report, 'https')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/the TLS certificate chain does not lead to a trusted CA/),
      hint: expect.stringMatching(/public CA/),
    });
  });

  it('refuses private addresses without --allow-private, and a bad command line with exit 2', async () => {
    const run = await runCli([site.url, '--ca', sites.caFile, '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as ConformanceReport;
    expect(rule(report, 'https')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/non-public address/),
    });
    expect(rule(report, 'https').hint).toMatch(/--allow-private/);

    const plain = await runCli([site.url.replace('https:', 'http:'), '--json']);
    expect(plain.code).toBe(1);
    expect(rule(JSON.parse(plain.stdout) as ConformanceReport, 'https')).toMatchObject({
      status: 'fail',
      message: 'url must use https://',
    });

    const usage = await runCli(['--burst', 'many', site.url]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--burst must be a whole number/);
    expect((await runCli([])).code).toBe(2);
  });

  it("takes the test account's password from AGENTSITE_CHECK_PASSWORD or standard input, never from the command line", async () => {
    // Refused with exit 2 and a message saying what to do instead, before anything is sent to the site.
    const flag = await runCli([...cliArgs(site), '--password', 'root-password']);
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe('');
    expect(flag.stderr).toMatch(/--password is no longer accepted .*AGENTSITE_CHECK_PASSWORD or use --password-stdin/);
    // --user without a password anywhere is a bad command line too.
    const none = await runCli(cliArgs(site), { password: undefined });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--user needs its password/);
    // From standard input: the consent page is passed, and every rule passes.
    const piped = await runCli([...cliArgs(site), '--password-stdin'], {
      password: undefined,
      stdin: 'root-password\n',
    });
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
    expect(rule(JSON.parse(piped.stdout) as ConformanceReport, 'oauth.token').status).toBe('pass');
  });

  describe('through the API', () => {
    let stack: Stack;
    let http: Http;
    let blocked: ReferenceSite;

    beforeAll(async () => {
      blocked = await sites.start(SITE_OPTIONS);
      // A budget that a whole check fits in (each of its requests takes an outgoing slot).
      stack = await Stack.start({
        worker: false,
        env: { ...siteEnv(sites, [site]), OUTGOING_CALLS_PER_MINUTE: '1000' },
      });
      site.allowRedirect('agentsite', `${stack.baseUrl}/api/oauth/callback`);
      http = new Http(stack.baseUrl);
    });

    afterAll(async () => {
      await stack?.stop();
    });

    it('serves the manifest schema the validator uses', async () => {
      const answer = await http.get('/api/conformance/manifest-schema');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(JSON.parse(JSON.stringify(MANIFEST_SCHEMA)));
    });

    it('checks a site with a bearer token; consent-page rules are skipped with the reason, the rest pass', async () => {
      const user = await registerUser(http);
      expect((await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).status).toBe(201);
      const token = site.issueApiToken('root').token;
      const answer = await http.post('/api/conformance/check', { url: site.url, token }, { token: user.token });
      expect(answer.status).toBe(200);
      const report = answer.body as ConformanceReport;
      const notPassed = report.rules.filter((r) => r.status !== 'pass').map((r) => [r.id, r.status]);
      expect(notPassed).toEqual([
        ['oauth.state', 'skipped'],
        ['oauth.token', 'skipped'],
        ['oauth.refresh-rotation', 'skipped'],
      ]);
      expect(rule(report, 'oauth.state').message).toMatch(
        /run agentsite-check with --user and the password in AGENTSITE_CHECK_PASSWORD/,
      );
      expect(rule(report, 'tools.rate-limit').message).toMatch(/429 after at most \d+ calls, Retry-After: \d+/);
      expect(report.passed).toBe(false);

      site.faults = { plainTextUnauthorized: true };
      try {
        const faulty = await http.post('/api/conformance/check', { url: site.url }, { token: user.token });
        expect(rule(faulty.body as ConformanceReport, 'tools.get_note.unauthorized')).toMatchObject({ status: 'fail' });
        expect(rule(faulty.body as ConformanceReport, 'tools.get_note.input').message).toMatch(/no test credential/);
      } finally {
        site.faults = {};
      }
    });

    it("checks only a site of the caller's vault, after the terms: any other address is never reached", async () => {
      const newcomer = await registerUser(http, { acceptTerms: false });
      expectError(
        await http.post('/api/conformance/check', { url: site.url }, { token: newcomer.token }),
        'TERMS_NOT_ACCEPTED',
        403,
      );
      const user = await registerUser(http);
      const before = { blocked: blocked.stats.connections, site: site.stats.connections };
      // Not in the vault: a private address the service would refuse, and a site another user added.
      for (const url of [blocked.url, site.url]) {
        const answer = await http.post('/api/conformance/check', { url }, { token: user.token });
        expectError(answer, 'NOT_FOUND', 404);
        expect(answer.body.error).toMatch(/in your vault: add it first/);
      }
      expectError(
        await http.post('/api/conformance/check', { url: 'http://notes.example.com' }, { token: user.token }),
        'INVALID_URL',
        400,
      );
      expect(blocked.stats.connections).toBe(before.blocked);
      expect(site.stats.connections).toBe(before.site);
    });

    it('refuses anonymous callers and bad fields, and limits checks per user', async () => {
      expectError(await http.post('/api/conformance/check', { url: site.url }), 'UNAUTHORIZED', 401);
      const user = await registerUser(http);
      for (const body of [
        { url: null },
        {},
        { url: site.url, token: null },
        { url: site.url, token: 7 },
        { url: site.url, burst: 0 },
        { url: site.url, burst: 71 },
        { url: site.url, burst: '5' },
      ]) {
        expectError(await http.post('/api/conformance/check', body, { token: user.token }), 'VALIDATION_ERROR', 400);
      }
      for (let i = 0; i < CHECKS_PER_WINDOW; i += 1) {
        expect((await http.post('/api/conformance/check', { url: blocked.url }, { token: user.token })).status).toBe(
          404,
        );
      }
      const limited = await http.post('/api/conformance/check', { url: blocked.url }, { token: user.token });
      expectError(limited, 'RATE_LIMITED', 429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  });

  describe('through the API, within the outgoing budget', () => {
    let stack: Stack;
    let http: Http;
    let budgeted: ReferenceSite;
    let down: ReferenceSite;

    beforeAll(async () => {
      budgeted = await sites.start(SITE_OPTIONS);
      down = await sites.start(SITE_OPTIONS);
      // A vault's default share of a domain's 12 calls a minute: 6.
      stack = await Stack.start({
        worker: false,
        env: { ...siteEnv(sites, [budgeted, down]), OUTGOING_CALLS_PER_MINUTE: '12' },
      });
      http = new Http(stack.baseUrl);
    });

    afterAll(async () => {
      await stack?.stop();
    });

    it("spends the vault's outgoing share like tool calls: the rules past it are skipped, then calls are refused", async () => {
      const user = await registerUser(http);
      const siteId = (await http.post('/api/vault/sites', { url: budgeted.url }, { token: user.token })).body
        .id as string;
      const stored = await http.post(
        `/api/vault/sites/${siteId}/token`,
        { token: budgeted.issueApiToken('root').token },
        { token: user.token },
      );
      expect(stored.status).toBe(201);
      const callsBefore = budgeted.stats.toolCalls;
      const token = budgeted.issueApiToken('root').token;
      const answer = await http.post('/api/conformance/check', { url: budgeted.url, token }, { token: user.token });
      expect(answer.status).toBe(200);
      const report = answer.body as ConformanceReport;
      expect(rule(report, 'check.stopped')).toMatchObject({
        status: 'skipped',
        message: expect.stringMatching(/outgoing limit of localhost:\d+ for this vault is spent/),
      });
      expect(report.passed).toBe(false);
      // The manifest and OAuth requests took slots too: fewer than 6 tool calls reached the site.
      expect(budgeted.stats.toolCalls - callsBefore).toBeLessThan(6);
      // The same budget as tool calls: the vault's share for this minute is spent.
      expectError(
        await http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token }),
        'OUTGOING_RATE_LIMITED',
        429,
      );
      // Spent before the first request: the whole check waits, as a tool call does.
      const again = await http.post('/api/conformance/check', { url: budgeted.url }, { token: user.token });
      expectError(again, 'OUTGOING_RATE_LIMITED', 429);
      expect(Number(again.headers.get('retry-after'))).toBe(60);
    });

    it('says a network failure in the words of the rest of the API, without addresses or socket codes', async () => {
      const user = await registerUser(http);
      expect((await http.post('/api/vault/sites', { url: down.url }, { token: user.token })).status).toBe(201);
      const port = down.port;
      await down.stop();
      const answer = await http.post('/api/conformance/check', { url: down.url }, { token: user.token });
      expect(answer.status).toBe(200);
      const https = rule(answer.body as ConformanceReport, 'https');
      expect(https).toMatchObject({
        status: 'fail',
        message: `localhost:${port}: the site refused the connection`,
      });
      expect(JSON.stringify(answer.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|::1/);
    });
  });
});
