import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { toolNamed } from '../fixtures/fake-model.js';
import { expectError, Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

const METRICS_TOKEN = 'metrics-scraper-token-for-the-e2e-suite-0123456789';
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** One sample of a Prometheus exposition: the metric with exactly these labels (0 when absent, as a counter not yet touched). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) {
      continue;
    }
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(found).length && wanted.every(([key, value]) => found[key] === value)) {
      return Number(match[3]);
    }
  }
  return 0;
}

async function scrape(url: string, token = METRICS_TOKEN): Promise<string> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
  return res.text();
}

describe('metrics and health (e2e)', () => {
  let world: World;
  let user: TestUser;
  let siteId: string;
  let domain: string;
  const api = (): Promise<string> => scrape(`${world.stack.baseUrl}/api/metrics`);
  const worker = (): Promise<string> => scrape(`${world.stack.workerHttpUrl}/metrics`);

  beforeAll(async () => {
    world = await startWorld({
      workerHttp: true,
      env: { METRICS_TOKEN, OUTGOING_CALLS_PER_MINUTE: '4', OUTGOING_CALLS_PER_MINUTE_PER_USER: '4' },
    });
    user = await registerUser(world.http);
    await world.http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: world.admin.token });
    const added = await world.http.post('/api/vault/sites', { url: world.site.url }, { token: user.token });
    siteId = added.body.id;
    await world.http.post(
      `/api/vault/sites/${siteId}/token`,
      { token: world.site.issueApiToken('alice').token },
      { token: user.token },
    );
    domain = `localhost:${world.site.port}`;
  });

  afterAll(async () => {
    await world?.stop();
  });

  it('liveness answers 200; readiness 200 once the worker polls; the worker has its own live and ready', async () => {
    const live = await world.http.get('/api/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await eventually('API ready', async () => {
      const res = await world.http.get('/api/health/ready');
      return res.status === 200 ? res : undefined;
    });
    expect(ready.body).toEqual({ status: 'ready', reasons: [] });
    // GET /api/health stays as it was (compose and the test stacks use it).
    expect((await world.http.get('/api/health')).body).toMatchObject({ status: 'ok', database: { status: 'up' } });

    const workerLive = await fetch(`${world.stack.workerHttpUrl}/health/live`);
    expect(workerLive.status).toBe(200);
    expect(await workerLive.json()).toEqual({ status: 'ok' });
    const workerReady = await eventually('worker ready', async () => {
      const res = await fetch(`${world.stack.workerHttpUrl}/health/ready`);
      return res.status === 200 ? res : undefined;
    });
    expect(await workerReady.json()).toEqual({ status: 'ready', reasons: [] });
    expect((await fetch(`${world.stack.workerHttpUrl}/nothing`)).status).toBe(404);
  });

  it('serves metrics only to operators: METRICS_TOKEN or an admin token; the worker only with METRICS_TOKEN', async () => {
    const url = '/api/metrics';
    expectError(await world.http.get(url), 'UNAUTHORIZED', 401);
    expectError(await world.http.get(url, { token: 'not-the-metrics-token' }), 'INVALID_TOKEN', 401);
    expectError(await world.http.get(url, { token: user.token }), 'ADMIN_REQUIRED', 403);
    const byAdmin = await world.http.get(url, { token: world.admin.token });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
    expect(byAdmin.text).toContain('# TYPE agentsite_http_request_duration_seconds histogram');
    expect(byAdmin.text).toContain('# TYPE process_cpu_user_seconds_total counter');
    // Route templates, never raw paths (one series per route, whatever the ids).
    const text = await api();
    expect(
      sample(text, 'agentsite_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/health/live',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'agentsite_http_request_duration_seconds_count', {
        method: 'PATCH',
        route: '/api/admin/users/:id',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(`route="/api/admin/users/${user.id}"`);

    const workerUrl = `${world.stack.workerHttpUrl}/metrics`;
    const refused = await fetch(workerUrl);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'UNAUTHORIZED', statusCode: 401 });
    expect((await fetch(workerUrl, { headers: { authorization: `Bearer ${world.admin.token}` } })).status).toBe(401);
    const workerText = await worker();
    expect(workerText).toContain('# TYPE agentsite_runs_started_total counter');
    // The Temporal SDK's own metrics, from its Prometheus exporter, in the same scrape.
    expect(workerText).toMatch(/^temporal_\w+/m);
    expect(workerText).toContain('temporal_worker_task_slots_available');
  });

  it('counts a manual run: queued (API), started, completed, its duration, its tool call by domain and its tokens (worker)', async () => {
    const agent = (
      await world.http.post(
        '/api/agents',
        { name: 'Counter', systemPrompt: 'Take notes.', siteIds: [siteId], trigger: { type: 'manual' } },
        { token: user.token },
      )
    ).body;
    world.model.script(
      (req) => ({
        toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Metrics' } }],
        usage: { input_tokens: 300, output_tokens: 40 },
      }),
      { text: 'Noted.', usage: { input_tokens: 500, output_tokens: 70 } },
    );
    const [apiBefore, workerBefore] = await Promise.all([api(), worker()]);
    const started = await world.http.post(`/api/agents/${agent.id}/runs`, { input: 'note it' }, { token: user.token });
    expect(started.status).toBe(201);
    expect((await waitForRun(world.http, user.token, started.body.id)).status).toBe('completed');

    const manual = { trigger: 'manual' };
    const completed = { trigger: 'manual', status: 'completed' };
    const toolOk = { domain, outcome: 'ok' };
    const workerAfter = await eventually('the run counted by the worker', async () => {
      const text = await worker();
      const ended =
        sample(text, 'agentsite_runs_ended_total', completed) -
        sample(workerBefore, 'agentsite_runs_ended_total', completed);
      return ended >= 1 ? text : undefined;
    });
    const delta = (name: string, labels: Record<string, string> = {}): number =>
      sample(workerAfter, name, labels) - sample(workerBefore, name, labels);
    expect(delta('agentsite_runs_started_total', manual)).toBe(1);
    expect(delta('agentsite_runs_ended_total', completed)).toBe(1);
    expect(delta('agentsite_run_duration_seconds_count', completed)).toBe(1);
    expect(delta('agentsite_run_duration_seconds_sum', completed)).toBeGreaterThan(0);
    expect(delta('agentsite_tool_call_duration_seconds_count', toolOk)).toBe(1);
    expect(delta('agentsite_model_tokens_total', { type: 'input' })).toBe(800);
    expect(delta('agentsite_model_tokens_total', { type: 'output' })).toBe(110);

    const apiAfter = await api();
    const apiDelta = (name: string, labels: Record<string, string>): number =>
      sample(apiAfter, name, labels) - sample(apiBefore, name, labels);
    expect(apiDelta('agentsite_runs_queued_total', manual)).toBe(1);
    expect(
      apiDelta('agentsite_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/agents/:id/runs',
        status: '201',
      }),
    ).toBe(1);
  });

  it('counts webhook deliveries: refused by code, accepted; the webhook run ends as counted by its trigger', async () => {
    const agent = (
      await world.http.post(
        '/api/agents',
        { name: 'Hook', systemPrompt: 'React.', siteIds: [], trigger: { type: 'webhook', schema: [] } },
        { token: user.token },
      )
    ).body;
    const [apiBefore, workerBefore] = await Promise.all([api(), worker()]);
    const path = `/api/webhooks/agent/${agent.id}`;
    const secret = { 'x-webhook-secret': agent.webhookSecret as string };
    expectError(
      await world.http.post(path, {}, { headers: { 'x-webhook-secret': 'wrong' } }),
      'WEBHOOK_SECRET_INVALID',
      401,
    );
    expectError(
      await world.http.request('POST', path, {
        rawBody: '{"broken',
        headers: { ...secret, 'content-type': 'application/json' },
      }),
      'WEBHOOK_PAYLOAD_INVALID',
      422,
    );
    const accepted = await world.http.post(path, { hello: 'world' }, { headers: secret });
    expect(accepted.status).toBe(202);
    await waitForRun(world.http, user.token, accepted.body.runId);

    const apiAfter = await api();
    const deliveries = (outcome: string, code: string): number =>
      sample(apiAfter, 'agentsite_webhook_deliveries_total', { outcome, code }) -
      sample(apiBefore, 'agentsite_webhook_deliveries_total', { outcome, code });
    expect(deliveries('refused', 'WEBHOOK_SECRET_INVALID')).toBe(1);
    expect(deliveries('refused', 'WEBHOOK_PAYLOAD_INVALID')).toBe(1);
    expect(deliveries('accepted', 'none')).toBe(1);
    expect(
      sample(apiAfter, 'agentsite_runs_queued_total', { trigger: 'webhook' }) -
        sample(apiBefore, 'agentsite_runs_queued_total', { trigger: 'webhook' }),
    ).toBe(1);
    const ended = { trigger: 'webhook', status: 'completed' };
    await eventually('the webhook run counted by the worker', async () => {
      const text = await worker();
      const delta =
        sample(text, 'agentsite_runs_ended_total', ended) - sample(workerBefore, 'agentsite_runs_ended_total', ended);
      return delta === 1 ? true : undefined;
    });
  });

  it('counts calls refused by the outgoing limit, by domain (last: it spends the domain’s budget)', async () => {
    const before = await api();
    const answers: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const res = await world.http.post(
        `/api/vault/sites/${siteId}/tools/list_notes/call`,
        { input: {} },
        { token: user.token },
      );
      answers.push(res.status);
    }
    const limited = answers.filter((status) => status === 429).length;
    expect(limited).toBeGreaterThan(0);
    const after = await api();
    expect(
      sample(after, 'agentsite_outgoing_limited_total', { domain }) -
        sample(before, 'agentsite_outgoing_limited_total', { domain }),
    ).toBe(limited);
    const refusedCalls = { domain, outcome: 'outgoing_rate_limited' };
    expect(
      sample(after, 'agentsite_tool_call_duration_seconds_count', refusedCalls) -
        sample(before, 'agentsite_tool_call_duration_seconds_count', refusedCalls),
    ).toBe(limited);
  });
});

describe('metrics: a bounded set of site domains (e2e)', () => {
  let sites: TestSites;
  let three: ReferenceSite[];
  let stack: Stack;

  beforeAll(async () => {
    sites = await testSites();
    three = [await sites.start(), await sites.start(), await sites.start()];
    stack = await Stack.start({
      worker: false,
      env: { ...siteEnv(sites, three), METRICS_TOKEN, METRICS_DOMAIN_LABELS: '2' },
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await sites?.stopAll();
  });

  it('names the first METRICS_DOMAIN_LABELS domains a process sees and counts every later one as (other)', async () => {
    const http = new Http(stack.baseUrl);
    const user = await registerUser(http);
    for (const site of three) {
      const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
      expect(added.status).toBe(201);
      // No credential stored: the call fails before it is sent, and is still timed by its domain.
      const call = await http.post(
        `/api/vault/sites/${added.body.id}/tools/list_notes/call`,
        { input: {} },
        { token: user.token },
      );
      expectError(call, 'TOOL_EXECUTION_ERROR', 502);
    }
    const text = await scrape(`${stack.baseUrl}/api/metrics`);
    const noCredential = (domain: string) =>
      sample(text, 'agentsite_tool_call_duration_seconds_count', { domain, outcome: 'no_credential' });
    expect(noCredential(`localhost:${three[0]!.port}`)).toBe(1);
    expect(noCredential(`localhost:${three[1]!.port}`)).toBe(1);
    expect(noCredential('(other)')).toBe(1);
    expect(text).not.toContain(`localhost:${three[2]!.port}`);
  });
});

/**
 * Readiness counts a worker whose last poll is at most WORKER_POLL_MAX_AGE_SECONDS old (120 by
 * default, above an idle worker's minute-long poll). This stack judges by 15 s, so that a stopped
 * worker is noticed in seconds rather than the two minutes the default would have this suite wait.
 */
const POLL_MAX_AGE_SECONDS = 15;

describe('readiness without a worker (e2e)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({ worker: false, env: { WORKER_POLL_MAX_AGE_SECONDS: String(POLL_MAX_AGE_SECONDS) } });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 503 with a generic reason while no worker polls the task queue, and 200 once one does', async () => {
    const live = await fetch(`${stack.baseUrl}/api/health/live`);
    expect(live.status).toBe(200);
    const notReady = await fetch(`${stack.baseUrl}/api/health/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'not_ready', reasons: ['no worker polls the task queue'] });

    await stack.startWorker();
    const ready = await eventually('ready with the worker', async () => {
      const res = await fetch(`${stack.baseUrl}/api/health/ready`);
      return res.status === 200 ? res : undefined;
    });
    expect(await ready.json()).toEqual({ status: 'ready', reasons: [] });
  });

  // Temporal keeps listing a stopped worker with the time of its last poll: readiness fails once
  // that poll is older than WORKER_POLL_MAX_AGE_SECONDS, so this waits for that.
  it('fails again once the worker is stopped: 503, no worker polls', async () => {
    await stack.stopWorker();
    // Asked every 2 s (each answer asks Temporal), for up to four times the setting.
    const stopped = await eventually(
      'not ready without the worker',
      async () => {
        const res = await fetch(`${stack.baseUrl}/api/health/ready`);
        if (res.status === 503) {
          return res;
        }
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        return undefined;
      },
      4 * POLL_MAX_AGE_SECONDS * 1000,
    );
    expect(await stopped.json()).toEqual({ status: 'not_ready', reasons: ['no worker polls the task queue'] });
    expect((await fetch(`${stack.baseUrl}/api/health/live`)).status).toBe(200);
  }, 120_000);
});
