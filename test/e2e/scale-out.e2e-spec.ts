import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import type { ReferenceSite } from '../../examples/site/site.js';
import { FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { testDataConverter } from '../utils/temporal.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerAdmin } from '../utils/admin.js';
import { Cluster } from '../utils/cluster.js';
import { expectError, expectRateLimited, type HttpAnswer } from '../utils/http.js';
import { eventually, waitForRun, type RunView } from '../utils/runs.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { registerUser, TEST_PASSWORD, type TestUser, uniqueEmail } from '../utils/users.js';

const AGENTS = 20;
const WEBHOOKS_PER_AGENT = 10;
/** OUTGOING_CALLS_PER_MINUTE of the scaled-out service (the 200 runs call no tools; the limit test does). */
const OUTGOING_LIMIT = 4;

interface RunRow {
  id: string;
  agent_id: string;
  status: string;
  started_at: Date | null;
  ended_at: Date | null;
  credits: number;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

describe('scaled out: two API processes and two workers on one PostgreSQL and one Temporal (e2e)', () => {
  let sites: TestSites;
  let site: ReferenceSite;
  let model: FakeModel;
  let cluster: Cluster;
  let admin: TestUser;
  let db: pg.Client;

  beforeAll(async () => {
    sites = await testSites();
    site = await sites.start();
    model = await FakeModel.start();
    cluster = await Cluster.start({
      apis: 2,
      workers: 2,
      env: {
        ...siteEnv(sites, [site]),
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: model.url,
        OUTGOING_CALLS_PER_MINUTE: String(OUTGOING_LIMIT),
        // One user spends the whole domain budget here (no per-vault share).
        OUTGOING_CALLS_PER_MINUTE_PER_USER: String(OUTGOING_LIMIT),
        // A share of max_connections per process, as a deployment of many processes would set it.
        DATABASE_POOL_MAX: '10',
      },
    });
    admin = await registerAdmin(cluster.api(0).http, cluster.stack);
    db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
    await model?.stop();
    await sites?.stopAll();
  });

  it('200 webhooks over 20 agents, sent alternately to both APIs: 200 runs, one at a time per agent, in arrival order, on both workers', async () => {
    const http = cluster.api(0).http;
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: admin.token });
    const agents = await Promise.all(
      range(AGENTS).map(async (a) => {
        const created = await cluster.api(a).http.post(
          '/api/agents',
          {
            name: `Triage ${a}`,
            systemPrompt: `agent-${a}: triage the ticket.`,
            siteIds: [],
            trigger: { type: 'webhook', schema: [{ name: 'ticket', type: 'string', required: true }] },
          },
          { token: user.token },
        );
        expect(created.status).toBe(201);
        return created.body as { id: string; webhookSecret: string };
      }),
    );
    // A short model answer with a little latency, so the agents' runs really overlap each other.
    model.fallback = { text: 'handled', delayMs: 20 };

    // Each agent's webhooks go one after another (so "arrival order" is the order of the 202s), each
    // to the other API; the 20 agents' senders run at once.
    const sent = await Promise.all(
      agents.map(async (agent, a) => {
        const runIds: string[] = [];
        for (let k = 0; k < WEBHOOKS_PER_AGENT; k += 1) {
          const answer = await cluster
            .api(a + k)
            .http.post(
              `/api/webhooks/agent/${agent.id}`,
              { ticket: `a${a}-t${k}` },
              { headers: { 'x-webhook-secret': agent.webhookSecret } },
            );
          expect(answer.status).toBe(202);
          runIds.push(answer.body.runId as string);
        }
        return runIds;
      }),
    );
    const agentIds = agents.map((a) => a.id);
    const rows = await eventually(
      'every run ended',
      async () => {
        const result = await db.query<RunRow>(
          `SELECT id, agent_id, status, started_at, ended_at, (usage->>'credits')::int AS credits
             FROM runs WHERE agent_id = ANY($1::uuid[])`,
          [agentIds],
        );
        return result.rows.length === AGENTS * WEBHOOKS_PER_AGENT && result.rows.every((r) => r.ended_at !== null)
          ? result.rows
          : undefined;
      },
      150_000,
    );
    expect(rows.filter((r) => r.status !== 'completed')).toEqual([]);

    for (const [a, agentId] of agentIds.entries()) {
      const started = rows
        .filter((r) => r.agent_id === agentId)
        .sort((x, y) => x.started_at!.getTime() - y.started_at!.getTime());
      // In arrival order...
      expect(started.map((r) => r.id)).toEqual(sent[a]);
      // ...and never two active: each run starts after the one before it ended.
      for (let i = 1; i < started.length; i += 1) {
        expect(started[i]!.started_at!.getTime()).toBeGreaterThanOrEqual(started[i - 1]!.ended_at!.getTime());
      }
      // The model saw the agent's tickets in the same order, and never two of its calls at once.
      const calls = model.requests
        .filter((r) => r.body.system === `agent-${a}: triage the ticket.`)
        .sort((x, y) => x.receivedAt - y.receivedAt);
      expect(calls.map((r) => /a\d+-t\d+/.exec(JSON.stringify(r.body.messages[0]!.content))?.[0])).toEqual(
        range(WEBHOOKS_PER_AGENT).map((k) => `a${a}-t${k}`),
      );
      for (let i = 1; i < calls.length; i += 1) {
        expect(calls[i]!.receivedAt).toBeGreaterThanOrEqual(calls[i - 1]!.finishedAt!);
      }
    }

    // Every run was charged once, by whichever worker ran it, on the one balance.
    expect(rows.reduce((sum, r) => sum + r.credits, 0)).toBe(AGENTS * WEBHOOKS_PER_AGENT);
    const balance = await db.query<{ credits: number }>('SELECT credits::int AS credits FROM users WHERE id = $1', [
      user.id,
    ]);
    expect(balance.rows[0]!.credits).toBe(10_000 - AGENTS * WEBHOOKS_PER_AGENT);

    // Which worker ran each run: the identity Temporal recorded when the run's model turn completed.
    const byWorker = await workersOf(agentIds);
    const identities = cluster.workerIdentities();
    expect([...byWorker.keys()].sort()).toEqual([...identities].sort());
    expect([...byWorker.values()].reduce((sum, n) => sum + n, 0)).toBe(AGENTS * WEBHOOKS_PER_AGENT);
    process.stdout.write(`scale-out: runs per worker ${JSON.stringify(Object.fromEntries(byWorker))}\n`);
  }, 240_000);

  /**
   * How many of the runs each worker identity executed: the identity Temporal recorded for each
   * completed model turn (one per run here) in the histories of the agents' queues, which run their
   * runs themselves.
   */
  async function workersOf(agentIds: string[]): Promise<Map<string, number>> {
    const connection = await Connection.connect({ address: testEnv('temporalAddress') });
    try {
      // With the stacks' payload key: listing decodes each execution's memo.
      const client = new Client({ connection, dataConverter: testDataConverter() });
      const counts = new Map<string, number>();
      for (const agentId of agentIds) {
        for await (const execution of client.workflow.list({ query: `WorkflowId = "agent-${agentId}"` })) {
          const events =
            (await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory()).events ?? [];
          const modelTurns = new Set(
            events
              .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn')
              .map((e) => String(e.eventId)),
          );
          for (const event of events) {
            const completed = event.activityTaskCompletedEventAttributes;
            if (completed && modelTurns.has(String(completed.scheduledEventId)) && completed.identity) {
              counts.set(completed.identity, (counts.get(completed.identity) ?? 0) + 1);
            }
          }
        }
      }
      return counts;
    } finally {
      await connection.close();
    }
  }

  it('the outgoing limit per site domain is one budget for every API and worker process', async () => {
    const http = cluster.api(0).http;
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 1_000 }, { token: admin.token });
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id as string;
    const stored = await http.post(
      `/api/vault/sites/${siteId}/token`,
      { token: site.issueApiToken('alice', ['read']).token },
      { token: user.token },
    );
    expect(stored.status).toBe(201);
    const before = site.stats.toolCalls;

    // Twice the limit, at once, spread over both APIs: the limit holds in total, not per process.
    const answers = await Promise.all(
      range(2 * OUTGOING_LIMIT).map((i) =>
        cluster
          .api(i)
          .http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(OUTGOING_LIMIT);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expectError(refused, 'OUTGOING_RATE_LIMITED', 429);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    }
    expect(site.stats.toolCalls - before).toBe(OUTGOING_LIMIT);

    // A run's tool call on a worker takes from the same budget: it waits instead of calling the site.
    const agent = await http.post(
      '/api/agents',
      { name: 'Lister', systemPrompt: 'List notes.', siteIds: [siteId], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }));
    const runId = (await cluster.api(1).http.post(`/api/agents/${agent.body.id}/runs`, {}, { token: user.token })).body
      .id as string;
    const waiting = await eventually('the run waits for the outgoing limit', async () => {
      const run = (await http.get<RunView>(`/api/runs/${runId}`, { token: user.token })).body;
      return run.timeline.some((e) => e.type === 'waiting') ? run : undefined;
    });
    expect(waiting.timeline.find((e) => e.type === 'tool_result')).toMatchObject({
      ok: false,
      code: 'OUTGOING_RATE_LIMITED',
    });
    expect(waiting.timeline.find((e) => e.type === 'waiting')).toMatchObject({ reason: 'rate_limited' });
    expect(site.stats.toolCalls - before).toBe(OUTGOING_LIMIT);
    expect((await http.post(`/api/runs/${runId}/cancel`, {}, { token: user.token })).status).toBe(200);
    expect((await waitForRun(http, user.token, runId)).status).toBe('cancelled');
  });
});

// Window lengths and limits no other suite uses: the counters live in the shared database, keyed by
// the limit's configuration, so this file never shares a counter with another file's stacks.
const API_WINDOW = '37';
const AUTH_WINDOW = '47';
const PER_ADDRESS = 10;
const PER_USER = 5;
const SIGN_INS_PER_ADDRESS = 4;

let nextAddress = randomInt(1, 200) * 250;
/** A client address of its own (198.19.0.0/16, in the benchmarking range), as the proxy reports it. */
function freshAddress(): string {
  nextAddress += 1;
  return `198.19.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;
}

function from(address: string): { headers: Record<string, string> } {
  return { headers: { 'x-forwarded-for': address } };
}

function splitLimited(answers: HttpAnswer[], window: number): { passed: HttpAnswer[]; limited: HttpAnswer[] } {
  const limited = answers.filter((a) => a.status === 429);
  for (const answer of limited) {
    expectRateLimited(answer, window);
  }
  return { passed: answers.filter((a) => a.status !== 429), limited };
}

describe('API limits held across two API processes (e2e)', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await Cluster.start({
      apis: 2,
      workers: 0,
      env: {
        // The test is the one proxy in front of both processes, as a load balancer would be.
        TRUST_PROXY: '1',
        RATE_LIMIT_PER_IP: String(PER_ADDRESS),
        RATE_LIMIT_PER_USER: String(PER_USER),
        RATE_LIMIT_WINDOW_SECONDS: API_WINDOW,
        AUTH_ATTEMPTS_PER_IP: String(SIGN_INS_PER_ADDRESS),
        AUTH_ATTEMPTS_WINDOW_SECONDS: AUTH_WINDOW,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('RATE_LIMIT_PER_IP: twice the limit from one address, at once over both APIs, passes the limit once', async () => {
    const address = freshAddress();
    const answers = await Promise.all(
      range(2 * PER_ADDRESS).map((i) => cluster.api(i).http.get('/api/me', from(address))),
    );
    const { passed, limited } = splitLimited(answers, Number(API_WINDOW));
    expect(limited).toHaveLength(PER_ADDRESS);
    for (const answer of passed) {
      expectError(answer, 'UNAUTHORIZED', 401);
    }
  });

  it('RATE_LIMIT_PER_USER: twice the limit for one user, from many addresses over both APIs, passes the limit once', async () => {
    const email = uniqueEmail();
    const registered = await cluster
      .api(0)
      .http.post('/api/auth/register', { email, password: TEST_PASSWORD }, from(freshAddress()));
    expect(registered.status).toBe(201);
    const token = registered.body.accessToken as string;
    const answers = await Promise.all(
      range(2 * PER_USER).map((i) => cluster.api(i).http.get('/api/me', { token, ...from(freshAddress()) })),
    );
    const { passed, limited } = splitLimited(answers, Number(API_WINDOW));
    expect(limited).toHaveLength(PER_USER);
    expect(passed.map((a) => a.status)).toEqual(Array(PER_USER).fill(200));
  });

  it('AUTH_ATTEMPTS_PER_IP: twice the sign-ins from one address, at once over both APIs, passes the limit once', async () => {
    const address = freshAddress();
    const answers = await Promise.all(
      range(2 * SIGN_INS_PER_ADDRESS).map((i) =>
        cluster
          .api(i)
          .http.post('/api/auth/login', { email: uniqueEmail('nobody'), password: TEST_PASSWORD }, from(address)),
      ),
    );
    const { passed, limited } = splitLimited(answers, Number(AUTH_WINDOW));
    expect(limited).toHaveLength(SIGN_INS_PER_ADDRESS);
    for (const answer of passed) {
      expectError(answer, 'UNAUTHORIZED', 401);
    }
  });
});
