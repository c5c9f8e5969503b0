import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import { type Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { type Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';
import { sql } from '../utils/db.js';

type Line = Record<string, unknown> & { level: string; message: string; service: string; time: string };

/** Every line of one process's log file, parsed; a line that is not JSON fails the test that reads it. */
function linesOf(logFile: string): Line[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

/** The shape every line of the API and the worker has (src/common/log-format.ts). */
function expectShape(line: Line, service: 'api' | 'worker'): void {
  expect(line).toMatchObject({ service, pid: expect.any(Number), message: expect.any(String) });
  expect(new Date(line.time).toISOString()).toBe(line.time);
  expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(line.level);
}

describe('logs: one JSON shape, access lines, a request followed into its run (e2e)', () => {
  let world: World;
  let stack: Stack;
  let http: Http;
  let model: FakeModel;
  let site: ReferenceSite;
  let admin: TestUser;

  beforeAll(async () => {
    world = await startWorld();
    ({ stack, http, model, site, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  it('a webhook sent with X-Request-Id: the id is echoed, and the worker lines of its run carry it with agentId and runId', async () => {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    const siteToken = site.issueApiToken('alice').token;
    await http.post(`/api/vault/sites/${added.body.id}/token`, { token: siteToken }, { token: user.token });
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Log follower',
        systemPrompt: 'Note each ticket.',
        siteIds: [added.body.id],
        trigger: { type: 'webhook', schema: [{ name: 'ticket', type: 'string', required: true }] },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    const ticket = `ticket-text-${randomUUID()}`;
    const noteTitle = `note-title-${randomUUID()}`;
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: noteTitle } }] }), {
      text: 'Noted.',
    });

    const requestId = `logs-e2e-${randomUUID()}`;
    const accepted = await http.post(
      `/api/webhooks/agent/${agent.body.id}`,
      { ticket },
      { headers: { 'x-webhook-secret': agent.body.webhookSecret, 'x-request-id': requestId } },
    );
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('x-request-id')).toBe(requestId);
    expect(accepted.headers.get('x-correlation-id')).toBe(requestId);
    const runId = accepted.body.runId as string;
    const run = await waitForRun(http, user.token, runId);
    expect(run.status).toBe('completed');

    // The worker's lines of this run: its workflow's (through the SDK's sink) and each activity's.
    const ofRun = await eventually(
      'the worker lines of the run',
      async () => {
        const lines = linesOf(stack.worker!.logFile).filter((l) => l.runId === runId);
        // Every line asserted below (the archive is the execution's, at its hand-over: not a run's line).
        const seen = (message: string): boolean => lines.some((l) => l.message === message);
        return seen('run ended') && seen('callTool') ? lines : undefined;
      },
      15_000,
    );
    for (const line of ofRun) {
      expectShape(line, 'worker');
    }
    const activityLines = ofRun.filter((l) => l.context === 'temporal:activity');
    expect(activityLines.map((l) => l.message)).toEqual(expect.arrayContaining(['modelTurn', 'callTool']));
    const workflowLines = ofRun.filter((l) => l.context === 'temporal:workflow');
    expect(workflowLines.map((l) => l.message)).toEqual(expect.arrayContaining(['run started', 'run ended']));
    for (const line of [...activityLines, ...workflowLines]) {
      // The agent's queue runs the run in one of its executions: the run's id is named on each line.
      expect(line).toMatchObject({ requestId, agentId: agent.body.id, runId, workflowId: `agent-${agent.body.id}` });
      expect(line.workflowRunId).toBe(run.temporal.runId);
    }
    expect(activityLines.find((l) => l.message === 'callTool')).toMatchObject({
      userId: user.id,
      siteId: added.body.id,
      tool: 'create_note',
      activityType: 'callTool',
      attempt: 1,
    });
    expect(workflowLines.find((l) => l.message === 'run ended')).toMatchObject({ status: 'completed' });

    // The API's lines of the request carry the same id, and its access line the run it queued.
    const access = await eventually('the webhook access line', async () =>
      linesOf(stack.api.logFile).find((l) => l.context === 'http' && l.requestId === requestId),
    );
    expect(access).toMatchObject({
      method: 'POST',
      route: '/api/webhooks/agent/:agentId',
      status: 202,
      agentId: agent.body.id,
      runId,
    });

    // Ids and sizes only: neither the payload, the tool's input, the model's words nor any token.
    const everything = stack.logs();
    for (const secret of [ticket, noteTitle, 'Noted.', siteToken, agent.body.webhookSecret, user.token]) {
      expect(everything).not.toContain(secret);
    }
  }, 90_000);

  it('one access line per request: route template, status, duration, user and request id; no query string', async () => {
    const user = await registerUser(http);
    const agent = await http.post(
      '/api/agents',
      { name: 'Logged', systemPrompt: 'Hi.', siteIds: [], trigger: { type: 'manual' } },
      { token: user.token },
    );
    const found = await http.get(`/api/agents/${agent.body.id}?access_token=query-secret-4711`, { token: user.token });
    expect(found.status).toBe(200);
    const missing = await http.get(`/api/agents/${randomUUID()}`, { token: user.token });
    expect(missing.status).toBe(404);
    const unrouted = await http.get('/api/no-such-route');
    expect(unrouted.status).toBe(404);

    const accessLine = (res: typeof found) =>
      eventually('an access line', async () => {
        const id = res.headers.get('x-request-id');
        const lines = linesOf(stack.api.logFile).filter((l) => l.context === 'http' && l.requestId === id);
        return lines.length > 0 ? lines : undefined;
      });
    const [ok] = await accessLine(found);
    expectShape(ok!, 'api');
    expect(ok).toMatchObject({
      level: 'info',
      message: 'GET /api/agents/:id 200',
      method: 'GET',
      route: '/api/agents/:id',
      status: 200,
      userId: user.id,
      requestId: found.headers.get('x-request-id'),
      durationMs: expect.any(Number),
    });
    expect(await accessLine(found)).toHaveLength(1);
    expect((await accessLine(missing))[0]).toMatchObject({ route: '/api/agents/:id', status: 404, userId: user.id });
    expect((await accessLine(unrouted))[0]).toMatchObject({ route: null, status: 404 });
    expect((await accessLine(unrouted))[0]).not.toHaveProperty('userId');
    expect(stack.logs()).not.toContain('query-secret-4711');
    expect(stack.logs()).not.toContain(agent.body.id + '?');
  });

  it('X-Request-Id: a sane one is kept, X-Correlation-Id is accepted too, anything else is replaced', async () => {
    const sent = await http.get('/api/health', { headers: { 'x-request-id': 'caller-chosen-0001' } });
    expect(sent.headers.get('x-request-id')).toBe('caller-chosen-0001');
    expect(sent.headers.get('x-correlation-id')).toBe('caller-chosen-0001');
    const old = await http.get('/api/health', { headers: { 'x-correlation-id': 'caller-chosen-0002' } });
    expect(old.headers.get('x-request-id')).toBe('caller-chosen-0002');
    const both = await http.get('/api/health', {
      headers: { 'x-request-id': 'caller-chosen-0003', 'x-correlation-id': 'caller-chosen-0004' },
    });
    expect(both.headers.get('x-correlation-id')).toBe('caller-chosen-0003');
    const insane = await http.get('/api/health', { headers: { 'x-request-id': 'spaces and "quotes"' } });
    expect(insane.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(insane.headers.get('x-correlation-id')).toBe(insane.headers.get('x-request-id'));
    expect(stack.logs()).not.toContain('spaces and');
  });

  it('a statement PostgreSQL refuses is logged by its SQLSTATE and text, never with its parameters or its message', async () => {
    const user = await registerUser(http);
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id;
    const session = (await http.post('/api/sessions', { sites: [{ siteId }] }, { token: user.token })).body.token;
    const secret = `private-words-${randomUUID()}`;
    // The turn's save is refused by the database (as a constraint or a failover would refuse it), with
    // a message that quotes the value, as PostgreSQL's own messages do (`invalid input syntax …: "…"`):
    // neither the statement's parameters nor PostgreSQL's message may reach the log.
    await sql(
      `CREATE FUNCTION test_refuse_secret() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
        `IF NEW.content LIKE 'private-words-%' THEN RAISE EXCEPTION 'refused: %', NEW.content USING ERRCODE = '23514'; END IF; ` +
        `RETURN NEW; END $$`,
    );
    await sql(
      'CREATE TRIGGER test_refuse_secret BEFORE INSERT ON chat_messages FOR EACH ROW EXECUTE FUNCTION test_refuse_secret()',
    );
    try {
      model.script({ text: 'A reply that will not be saved.' });
      const turn = await http.post(`/api/sessions/${session}/messages`, { content: secret }, { token: user.token });
      expect(turn.status).toBeGreaterThanOrEqual(500);
      // The turn's own error line comes after the statement's: by then every line about it is written.
      await eventually('the failed turn in the log', async () =>
        linesOf(stack.api.logFile).find((l) => l.context === 'Chat' && /chat turn failed/.test(l.message)),
      );
      expect(readFileSync(stack.api.logFile, 'utf8')).not.toContain(secret);
      const failed = linesOf(stack.api.logFile).find(
        (l) => l.context === 'Database' && /statement failed/.test(l.message),
      );
      expect(failed?.level).toBe('error');
      expect(failed?.message).toContain('code 23514');
      expect(failed?.message).toContain('INSERT INTO chat_messages');
      // The turn's error line keeps the error's class and where it failed, not PostgreSQL's words.
      const turnLine = linesOf(stack.api.logFile).find(
        (l) => l.context === 'Chat' && /chat turn failed/.test(l.message),
      );
      expect(String(turnLine?.stack)).toMatch(/^QueryFailedError: \[PostgreSQL's message omitted/);
      expect(String(turnLine?.stack)).toContain('saveTurn');
    } finally {
      await sql('DROP TRIGGER test_refuse_secret ON chat_messages');
      await sql('DROP FUNCTION test_refuse_secret()');
    }
  });

  it('every line of both processes is JSON of the one shape, the Temporal SDK’s own lines included', async () => {
    const api = linesOf(stack.api.logFile);
    const worker = linesOf(stack.worker!.logFile);
    expect(api.length).toBeGreaterThan(0);
    for (const line of api) {
      expectShape(line, 'api');
    }
    for (const line of worker) {
      expectShape(line, 'worker');
    }
    // The SDK's worker lines (not ours): state changes of the worker, written through Runtime.install's logger.
    const sdk = worker.filter((l) => l.context === 'temporal:worker');
    expect(sdk.length).toBeGreaterThan(0);
    expect(sdk.some((l) => l.taskQueue === stack.env.TEMPORAL_TASK_QUEUE)).toBe(true);
    // Nest's lines of the worker (its start-up) are the same shape.
    expect(worker.some((l) => l.context === 'worker' && /polling task queue/.test(l.message))).toBe(true);
    // A task token completes the task: never written.
    expect(worker.some((l) => 'taskToken' in l)).toBe(false);
  });
});
