import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ERROR_CODES } from '../../src/common/error-codes.js';
import { startEmbeddedPostgres } from '../../scripts/runtime/postgres.js';
import { freePort, stopChild } from '../../scripts/runtime/processes.js';
import { startTemporalDevServer } from '../../scripts/runtime/temporal.js';
import { FakeModel } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerAdmin } from '../utils/admin.js';
import { expectError, Http, type HttpAnswer } from '../utils/http.js';
import { casesOf, type OpenApiDocument, type SweepCase } from '../utils/openapi-sweep.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser, uniqueEmail } from '../utils/users.js';

const LISTED = new Set<string>(ERROR_CODES);

/** A webhook agent of a harness-tier user with plenty of credits. */
async function webhookAgent(http: Http, admin: TestUser) {
  const user = await registerUser(http);
  await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 100_000 }, { token: admin.token });
  const agent = await http.post(
    '/api/agents',
    {
      name: 'faulty',
      systemPrompt: 'p',
      siteIds: [],
      trigger: { type: 'webhook', schema: [{ name: 'n', type: 'integer' }] },
    },
    { token: user.token },
  );
  return { user, agent: agent.body as { id: string; webhookSecret: string } };
}

describe('fault suite: hostile input', () => {
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let model: FakeModel;
  let sites: TestSites;
  let siteUrl: string;

  beforeAll(async () => {
    model = await FakeModel.start();
    sites = await testSites();
    const site = await sites.start();
    siteUrl = site.url;
    stack = await Stack.start({
      env: { ...siteEnv(sites, [site]), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: model.url },
    });
    http = new Http(stack.baseUrl);
    admin = await registerAdmin(http, stack);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.stop();
    await sites?.stopAll();
  });

  it('1 MB and deeply nested webhook bodies, invalid UTF-8 and wrong content types: 4xx, nothing started', async () => {
    const { user, agent } = await webhookAgent(http, admin);
    const send = (rawBody: string | Buffer, contentType: string) =>
      http.request('POST', `/api/webhooks/agent/${agent.id}`, {
        rawBody,
        headers: { 'content-type': contentType, 'x-webhook-secret': agent.webhookSecret },
      });
    const huge = await send(JSON.stringify({ n: 1, blob: 'x'.repeat(1024 * 1024) }), 'application/json');
    expectError(huge, 'WEBHOOK_PAYLOAD_INVALID', 422);
    const deepArray = await send(`{"n":1,"d":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, 'application/json');
    expect([400, 422]).toContain(deepArray.status);
    expect(LISTED.has(deepArray.body.code)).toBe(true);
    let nested = '1';
    for (let i = 0; i < 200; i += 1) {
      nested = `{"a":${nested}}`;
    }
    expectError(await send(`{"n":1,"d":${nested}}`, 'application/json'), 'WEBHOOK_PAYLOAD_INVALID', 422);
    const invalidUtf8 = Buffer.concat([
      Buffer.from('{"n":1,"s":"'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}'),
    ]);
    expectError(await send(invalidUtf8, 'application/json'), 'WEBHOOK_PAYLOAD_INVALID', 422);
    for (const type of [
      'text/plain',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
    ]) {
      const res = await send('n=1', type);
      expectError(res, 'WEBHOOK_PAYLOAD_INVALID', 422);
    }
    expectError(await send('{"n":1', 'application/json'), 'WEBHOOK_PAYLOAD_INVALID', 422);
    expect((await http.get(`/api/agents/${agent.id}/runs`, { token: user.token })).body.items).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });

  it('a randomised bad-input sweep over every route: no 500, no stack trace, only listed codes', async () => {
    const user = await registerUser(http);
    const doc = (await http.get('/api/docs/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    // Logging out would only make the rest of the sweep answer TOKEN_REVOKED.
    const skip = new Set(['/api/auth/logout', '/api/auth/logout-all']);
    const routes = Object.entries(doc.paths)
      .filter(([p]) => !skip.has(p))
      .flatMap(([p, methods]) => Object.keys(methods).map((method) => ({ path: p, method: method.toUpperCase() })));
    expect(routes.length).toBeGreaterThan(40);
    const segment = fc.oneof(
      fc.uuid(),
      fc.string({ maxLength: 40 }),
      fc.constantFrom('%00', '..', '%2e%2e%2f', "' OR 1=1 --", 'ses_' + 'A'.repeat(43), '-1', '9'.repeat(40), '%FF%FE'),
    );
    const body = fc.oneof(
      fc.anything({ maxDepth: 4 }),
      fc.dictionary(
        fc.constantFrom(
          'url',
          'email',
          'password',
          'token',
          'input',
          'content',
          'sites',
          'tier',
          'name',
          'trigger',
          'siteIds',
          'amount',
          'role',
          'userId',
          'tools',
        ),
        fc.anything({ maxDepth: 3 }),
      ),
      fc.string(),
    );
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.array(segment, { minLength: 3, maxLength: 3 }),
        body,
        fc.boolean(),
        async (route, segments, payload, asText) => {
          let i = 0;
          const url = route.path.replace(/\{[^}]+\}/g, () =>
            encodeURIComponent(String(segments[i++ % 3])).replace(/%25/g, '%'),
          );
          const options = asText
            ? {
                token: user.token,
                rawBody: typeof payload === 'string' ? payload : '{"truncated": ',
                headers: { 'content-type': 'application/json' },
              }
            : { token: user.token, body: payload === undefined ? {} : payload };
          const res = await http.request(
            route.method,
            url,
            route.method === 'GET' || route.method === 'DELETE' ? { token: user.token } : options,
          );
          requests += 1;
          const where = `${route.method} ${url} -> ${res.status} ${res.text.slice(0, 300)}`;
          if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) {
            throw new Error(`server error: ${where}`);
          }
          if (/\bat .+\.(js|ts):\d+/.test(res.text)) {
            throw new Error(`stack trace: ${where}`);
          }
          if (
            res.status >= 400 &&
            res.headers.get('content-type')?.includes('application/json') &&
            !LISTED.has(res.body?.code)
          ) {
            throw new Error(`unlisted code: ${where}`);
          }
        },
      ),
      { numRuns: 600, seed: 20261121, endOnFailure: true },
    );
    expect(requests).toBe(600);
  });

  it('a schema-driven sweep: null, every JSON type and boundary values in every field of every route', async () => {
    const doc = (await http.get('/api/docs/openapi.json')).body as OpenApiDocument;
    // The fixtures the valid parts of each body and its path name: real ids, so a value that passes
    // validation reaches the service and the database.
    const owner = await registerUser(http, { email: uniqueEmail('sweep-owner') });
    const victim = await registerUser(http, { email: uniqueEmail('sweep-victim') });
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team', credits: 1_000_000 }, { token: admin.token });
    const asOwner = { token: owner.token };
    const siteId = (await http.post('/api/vault/sites', { url: siteUrl }, asOwner)).body.id as string;
    const tool = (await http.get(`/api/vault/sites/${siteId}`, asOwner)).body.tools[0].name as string;
    const agentId = (
      await http.post(
        '/api/agents',
        { name: 'sweep', systemPrompt: 'p', siteIds: [siteId], trigger: { type: 'manual' } },
        asOwner,
      )
    ).body.id as string;
    const session = (await http.post('/api/sessions', { sites: [{ siteId }] }, asOwner)).body.token as string;
    const workspaceId = (await http.post('/api/workspaces', { name: 'sweep' }, asOwner)).body.id as string;
    await http.post(`/api/workspaces/${workspaceId}/members`, { email: victim.email, role: 'member' }, asOwner);
    const pathValues: Record<string, string> = { tool, token: session, userId: victim.id };
    const idOf = (route: string): string =>
      route.startsWith('/api/admin/users')
        ? victim.id
        : route.startsWith('/api/vault/sites')
          ? siteId
          : route.startsWith('/api/agents')
            ? agentId
            : route.startsWith('/api/workspaces')
              ? workspaceId
              : '00000000-0000-4000-8000-000000000000';
    const byName: Record<string, unknown> = {
      siteId,
      siteIds: [siteId],
      userId: victim.id,
      // Fails fast (a private address), instead of fetching a manifest from the internet.
      url: 'https://127.0.0.1:1/',
    };
    const values = { byName: (_route: string, name: string) => byName[name] };
    // Logging out would only make the rest of the sweep answer TOKEN_REVOKED.
    const skip = new Set(['/api/auth/logout', '/api/auth/logout-all']);
    const cases = Object.entries(doc.paths)
      .filter(([route]) => !skip.has(route))
      .flatMap(([route, methods]) => Object.keys(methods).flatMap((method) => casesOf(doc, route, method, values)));
    // Every route with a body or a query, every field of it, and null for each of them.
    expect(new Set(cases.map((c) => `${c.method} ${c.route}`)).size).toBeGreaterThanOrEqual(25);
    expect(cases.filter((c) => c.value === null).length).toBeGreaterThan(60);
    expect(cases.length).toBeLessThan(2500);

    const problems: string[] = [];
    const started = Date.now();
    const run = async (c: SweepCase): Promise<void> => {
      const url =
        c.route.replace(/\{([^}]+)\}/g, (_m, name: string) =>
          encodeURIComponent(name === 'id' ? idOf(c.route) : (pathValues[name] ?? name)),
        ) + (c.query ? `?${new URLSearchParams(c.query).toString()}` : '');
      const res = await http.request(c.method.toUpperCase(), url, {
        token: c.route.startsWith('/api/admin/') ? admin.token : owner.token,
        ...(c.body !== undefined ? { body: c.body } : {}),
      });
      const problem = sweepProblem(c, res);
      if (problem !== undefined) {
        const shown = JSON.stringify(c.value)?.slice(0, 60);
        problems.push(
          `${c.method.toUpperCase()} ${c.route} ${c.field}=${shown}: ${problem} (${res.status} ${res.text.slice(0, 200)})`,
        );
      }
    };
    // A few requests at a time: the whole sweep stays well under a minute.
    const queue = [...cases];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
          await run(c);
        }
      }),
    );
    console.log(`schema-driven sweep: ${cases.length} requests in ${Date.now() - started} ms`);
    expect(problems).toEqual([]);
  });
});

/** Why an answer to a sweep case is wrong, or undefined when it is fine. */
function sweepProblem(c: SweepCase, res: HttpAnswer): string | undefined {
  if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) {
    return 'server error';
  }
  if (/\bat .+\.(js|ts):\d+/.test(res.text)) {
    return 'stack trace';
  }
  if (res.status >= 400 && !LISTED.has(res.body?.code)) {
    return 'unlisted code';
  }
  if (c.mustRefuse && res.body?.code !== 'RATE_LIMITED') {
    if (res.status !== 400 || res.body?.code !== 'VALIDATION_ERROR') {
      return 'accepted a value its schema refuses (expected VALIDATION_ERROR)';
    }
    const field = c.field.replace(/^(body|query)\./, '');
    const named = (res.body.details as Array<{ field: string }> | undefined)?.some(
      (d) =>
        d.field === field ||
        d.field.startsWith(`${field}.`) ||
        d.field.startsWith(`${field}[`) ||
        field.startsWith(d.field),
    );
    if (!named) {
      return `VALIDATION_ERROR does not name ${field}`;
    }
  }
  return undefined;
}

describe('fault suite: processes and servers failing', () => {
  let model: FakeModel;
  beforeAll(async () => {
    model = await FakeModel.start();
  });
  afterAll(async () => {
    await model?.stop();
  });

  it('the API killed right after a 202: the run still happens', async () => {
    const stack = await Stack.start({
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: model.url },
    });
    try {
      const http = new Http(stack.baseUrl);
      const admin = await registerAdmin(http, stack);
      const { user, agent } = await webhookAgent(http, admin);
      model.script({ text: 'survived', delayMs: 500 });
      const accepted = await http.post(
        `/api/webhooks/agent/${agent.id}`,
        { n: 1 },
        { headers: { 'x-webhook-secret': agent.webhookSecret } },
      );
      expect(accepted.status).toBe(202);
      stack.api.child.kill('SIGKILL');
      await stopChild(stack.api.child);
      stack.api = stack.spawn('api', 'src/main.js');
      await stack.waitHealthy(true);
      const run = await waitForRun(http, user.token, accepted.body.runId);
      expect(run.status).toBe('completed');
      expect(run.timeline[run.timeline.length - 1]).toMatchObject({ type: 'completed', output: 'survived' });
    } finally {
      await stack.stop();
    }
  });

  it('the Temporal server stopped and restarted mid-run: every accepted run completes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'temporal-fault-'));
    const port = await freePort();
    const options = {
      cliPath: testEnv('temporalCli'),
      port,
      namespace: 'default',
      dbFile: path.join(dir, 'temporal.sqlite'),
      logFile: path.join(dir, 'temporal.log'),
    };
    let temporal = await startTemporalDevServer(options);
    const stack = await Stack.start({
      env: {
        ANTHROPIC_API_KEY: 'k',
        ANTHROPIC_BASE_URL: model.url,
        TEMPORAL_ADDRESS: temporal.address,
      },
    });
    try {
      const http = new Http(stack.baseUrl);
      const admin = await registerAdmin(http, stack);
      const { user, agent } = await webhookAgent(http, admin);
      model.fallback = { text: 'done after restart', delayMs: 300 };
      const accepted: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await http.post(
          `/api/webhooks/agent/${agent.id}`,
          { n: i },
          { headers: { 'x-webhook-secret': agent.webhookSecret } },
        );
        expect(res.status).toBe(202);
        accepted.push(res.body.runId as string);
      }
      await eventually('a run to be active', async () =>
        (await http.get(`/api/runs/${accepted[0]}`, { token: user.token })).body.status !== 'queued' ? true : undefined,
      );
      await temporal.stop();
      temporal = await startTemporalDevServer(options);
      for (const runId of accepted) {
        const run = await waitForRun(http, user.token, runId, undefined, 120_000);
        expect(run.status).toBe('completed');
      }
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
      await stack.stop();
      await temporal.stop();
    }
  });

  it('PostgreSQL restarted mid-run: the API answers errors (no hang) while it is down, and the run resumes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pg-fault-'));
    chmodSync(dir, 0o755);
    const port = await freePort();
    let postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port, fast: true });
    const stack = await Stack.start({
      env: {
        ANTHROPIC_API_KEY: 'k',
        ANTHROPIC_BASE_URL: model.url,
        DATABASE_URL: postgres.url,
      },
    });
    try {
      const http = new Http(stack.baseUrl);
      const admin = await registerAdmin(http, stack);
      const { user, agent } = await webhookAgent(http, admin);
      model.script({ text: 'finished after the database came back', delayMs: 3000 });
      const accepted = await http.post(
        `/api/webhooks/agent/${agent.id}`,
        { n: 1 },
        { headers: { 'x-webhook-secret': agent.webhookSecret } },
      );
      expect(accepted.status).toBe(202);
      await eventually('the model to be called', async () => (model.requests.length > 0 ? true : undefined));
      await postgres.stop();
      const started = Date.now();
      const during = await http.get('/api/me', { token: user.token });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(during.status).toBeGreaterThanOrEqual(500);
      expect(typeof during.body.error).toBe('string');
      expect(during.text).not.toMatch(/\bat .+\.(js|ts):\d+/);
      const correlationId = `pg-down-${Date.now()}-probe`;
      const health = await http.get('/api/health', { headers: { 'x-correlation-id': correlationId } });
      expect(health.status).toBe(503);
      // Public and unlimited: a generic reason only; the driver's error is in the log, by correlation id.
      expect(health.body.database).toMatchObject({ status: 'down', error: 'database unavailable' });
      expect(health.text).not.toMatch(/ECONNREFUSED|terminat|\d+\.\d+\.\d+\.\d+|:\d{4,5}\b/);
      expect(
        stack
          .logs()
          .split('\n')
          .find((line) => line.includes(correlationId)),
      ).toMatch(/the database is down: \S+/);
      postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port, fast: true });
      const run = await waitForRun(http, user.token, accepted.body.runId, undefined, 120_000);
      expect(run.status).toBe('completed');
      expect(run.timeline[run.timeline.length - 1]).toMatchObject({
        type: 'completed',
        output: 'finished after the database came back',
      });
    } finally {
      await stack.stop();
      await postgres.stop();
    }
  });
});
