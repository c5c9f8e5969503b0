import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Client, Connection, WorkflowExecutionInfo } from '@temporalio/client';
import type { ReferenceSite } from '../../examples/site/site.js';
import { stopChild } from '../../scripts/runtime/processes.js';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { expectError, type Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { type Stack } from '../utils/stack.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { temporalClient } from '../utils/temporal.js';
import { sql } from '../utils/db.js';

describe('agents and runs on Temporal (e2e)', () => {
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let temporal: Client;
  let connection: Connection;
  let world: World;

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000' } });
    ({ site, model, stack, http, admin } = world);
    ({ client: temporal, connection } = await temporalClient());
  });

  beforeEach(() => {
    // Scripts a test did not use (a run that failed early) must not leak into the next test.
    model.reset();
  });

  afterAll(async () => {
    await connection?.close();
    await world?.stop();
  });

  /** A user of the given tier with the reference site in the vault, connected with a bearer token. */
  async function userWithSite(tier = 'harness'): Promise<{ user: TestUser; siteId: string }> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    return { user, siteId: added.body.id };
  }

  async function createAgent(user: TestUser, body: Record<string, unknown>) {
    return http.post(
      '/api/agents',
      { name: 'Note taker', systemPrompt: 'You keep notes.', siteIds: [], trigger: { type: 'manual' }, ...body },
      { token: user.token },
    );
  }

  it('validates agents: cron, time zone, sites, tiers, limits; webhook agents get a URL and a one-time secret', async () => {
    const { user, siteId } = await userWithSite('free');
    const badCron = await createAgent(user, { trigger: { type: 'scheduled', cron: '61 * * * *' } });
    expectError(badCron, 'TIER_REQUIRED', 403); // free has no scheduled agents: tier is checked first
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'pro' }, { token: admin.token });
    const invalid = await createAgent(user, {
      trigger: { type: 'scheduled', cron: '61 * * * *', timezone: 'Mars/Olympus' },
    });
    expectError(invalid, 'VALIDATION_ERROR', 400);
    expect(invalid.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'trigger.cron',
      'trigger.timezone',
    ]);
    expectError(await createAgent(user, { trigger: { type: 'scheduled', cron: '* * * *' } }), 'VALIDATION_ERROR', 400);
    expectError(await createAgent(user, { trigger: { type: 'scheduled' } }), 'VALIDATION_ERROR', 400);
    const foreign = await createAgent(user, { siteIds: ['00000000-0000-4000-8000-000000000000'] });
    expectError(foreign, 'VALIDATION_ERROR', 400);
    expect(foreign.body.details[0].field).toBe('siteIds');
    expectError(await createAgent(user, { trigger: { type: 'webhook', schema: [] } }), 'TIER_REQUIRED', 403);
    expectError(await createAgent(user, { trigger: { type: 'sometimes' } }), 'VALIDATION_ERROR', 400);

    const scheduled = await createAgent(user, {
      siteIds: [siteId],
      trigger: { type: 'scheduled', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
    });
    expect(scheduled.status).toBe(201);
    expect(scheduled.body.trigger).toEqual({ type: 'scheduled', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
    // The agent is served at once; its schedule comes with it once Temporal answers within the bound.
    const described = await eventually('the agent with its schedule', async () => {
      const read = await http.get(`/api/agents/${scheduled.body.id}`, { token: user.token });
      expect(read.status).toBe(200);
      return 'schedule' in read.body ? read : undefined;
    });
    expect(Date.parse(described.body.schedule.nextRunAt)).toBeGreaterThan(Date.now());
    const schedule = await temporal.schedule.getHandle(`schedule-${scheduled.body.id}`).describe();
    expect(schedule.spec.timezone).toBe('Europe/Berlin');
    expect(schedule.policies.overlap).toBe('SKIP');
    // Its queue runs from now on, so that its firings signal it rather than start it.
    const queue = await temporal.workflow.getHandle(`agent-${scheduled.body.id}`).describe();
    expect(queue.status.name).toBe('RUNNING');
    expect(queue.type).toBe('agentQueueWorkflow');
    expect(queue.searchAttributes).toMatchObject({ AgentId: [scheduled.body.id], UserId: [user.id] });
    // A change of schedule or name replaces the schedule's definition (without reading it first).
    const renamed = await http.patch(
      `/api/agents/${scheduled.body.id}`,
      { name: 'Morning digest', trigger: { type: 'scheduled', cron: '30 6 * * *', timezone: 'Asia/Tokyo' } },
      { token: user.token },
    );
    expect(renamed.status).toBe(200);
    const replaced = await temporal.schedule.getHandle(`schedule-${scheduled.body.id}`).describe();
    expect(replaced.spec.timezone).toBe('Asia/Tokyo');
    expect(replaced.spec.calendars).toMatchObject([{ hour: [{ start: 6 }], minute: [{ start: 30 }] }]);
    expect(replaced.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 300_000 });
    expect(replaced.state.paused).toBe(false);
    expect(replaced.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'scheduledTriggerWorkflow',
      workflowId: `scheduled-${scheduled.body.id}`,
      args: [{ agentId: scheduled.body.id, localRequest: true }],
      memo: { agentName: 'Morning digest' },
    });

    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const hook = await createAgent(user, {
      trigger: {
        type: 'webhook',
        allowActionOverride: true,
        schema: [{ name: 'email', type: 'string', required: true }],
      },
    });
    expect(hook.status).toBe(201);
    expect(hook.body.webhookUrl).toBe(`${stack.baseUrl}/api/webhooks/agent/${hook.body.id}`);
    expect(hook.body.webhookSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const fetched = await http.get(`/api/agents/${hook.body.id}`, { token: user.token });
    expect(fetched.body.webhookSecret).toBeUndefined();
    expect(fetched.body.webhookUrl).toBe(hook.body.webhookUrl);
    const rotated = await http.post(`/api/agents/${hook.body.id}/webhook-secret/rotate`, undefined, {
      token: user.token,
    });
    expect(rotated.body.webhookSecret).not.toBe(hook.body.webhookSecret);
    const oldSecret = await http.post(
      `/api/webhooks/agent/${hook.body.id}`,
      { email: 'a@b.c' },
      { headers: { 'x-webhook-secret': hook.body.webhookSecret } },
    );
    expectError(oldSecret, 'WEBHOOK_SECRET_INVALID', 401);

    // Switching a manual agent to webhook generates its URL and secret; moving off a schedule deletes it.
    const switched = await http.patch(
      `/api/agents/${scheduled.body.id}`,
      { trigger: { type: 'webhook', schema: [] } },
      { token: user.token },
    );
    expect(switched.body.webhookSecret).toMatch(/^whsec_/);
    await expect(temporal.schedule.getHandle(`schedule-${scheduled.body.id}`).describe()).rejects.toThrow();

    const limit = await registerUser(http);
    for (let i = 0; i < 3; i += 1) {
      expect((await createAgent(limit, {})).status).toBe(201);
    }
    expectError(await createAgent(limit, {}), 'AGENT_LIMIT_REACHED', 403);
    expectError(
      await http.get('/api/agents/00000000-0000-4000-8000-000000000000', { token: user.token }),
      'AGENT_NOT_FOUND',
      404,
    );
    expectError(await http.get(`/api/agents/${hook.body.id}`, { token: limit.token }), 'AGENT_NOT_FOUND', 404);
  });

  it('a manual run with one model turn and one tool call completes with the expected timeline', async () => {
    const { user, siteId } = await userWithSite();
    const agent = (await createAgent(user, { siteIds: [siteId], systemPrompt: 'Take notes for the user.' })).body;
    model.script(
      (req) => ({
        text: 'Creating the note.',
        toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Standup', body: 'at 10' } }],
      }),
      { text: 'The note is created.', usage: { input_tokens: 1500, output_tokens: 600 } },
    );
    const before = (await http.get('/api/me', { token: user.token })).body.credits;
    const started = await http.post(
      `/api/agents/${agent.id}/runs`,
      { input: 'Note the standup at 10' },
      { token: user.token },
    );
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({
      agentId: agent.id,
      triggeredBy: 'manual',
      temporal: { workflowId: `agent-${agent.id}` },
    });
    // The agent's queue runs it, in an execution known once the run starts: the answer is the row as
    // the API read it after the queue accepted the run, which may already have started it.
    const answered: unknown = started.body.temporal.runId;
    expect(answered === null || typeof answered === 'string').toBe(true);
    const run = await waitForRun(http, user.token, started.body.id);
    expect(run.temporal).toEqual({ workflowId: `agent-${agent.id}`, runId: answered ?? expect.any(String) });
    expect(run.status).toBe('completed');
    expect(run.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(run.timeline[2]).toMatchObject({
      site: 'Reference Notebook',
      tool: 'create_note',
      input: { title: 'Standup', body: 'at 10' },
    });
    expect(run.timeline[3]).toMatchObject({ ok: true, attempt: 1, result: { title: 'Standup' } });
    expect(run.timeline[5]).toMatchObject({ output: 'The note is created.' });
    expect(run.usage).toEqual({ inputTokens: 1600, outputTokens: 620, credits: 4 });
    expect((await http.get('/api/me', { token: user.token })).body.credits).toBe(before - 4);
    // The model saw the agent's prompt and the tool's result; the site saw an idempotency key.
    const second = model.requests[model.requests.length - 1]!;
    expect(second.body.system).toBe('Take notes for the user.');
    expect(JSON.stringify(second.body.messages)).toContain('tool_result');
    expect(site.lastToolRequest?.headers['idempotency-key']).toMatch(/.+-\d+$/);
    // The same run, found in Temporal by its id (what an operator filters on in the UI): the queue's
    // execution that ran it.
    const found: WorkflowExecutionInfo[] = [];
    for (let tries = 0; tries < 50 && found.length === 0; tries += 1) {
      for await (const wf of temporal.workflow.list({
        query: `AgentId = "${agent.id}" AND AgentRunIds = "${run.id}"`,
      })) {
        found.push(wf);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(found.map((w) => [w.workflowId, w.runId, w.type])).toEqual([
      [`agent-${agent.id}`, run.temporal.runId, 'agentQueueWorkflow'],
    ]);
    expect(found[0]!.searchAttributes.AgentRunIds).toContain(run.id);
    expect(found[0]!.memo).toMatchObject({ agentName: 'Note taker' });
    expect((await http.get(`/api/agents/${agent.id}/runs`, { token: user.token })).body.items[0].id).toBe(run.id);
  });

  it('refuses a second manual start while a run is active (409), and cancels an active run', async () => {
    const { user, siteId } = await userWithSite();
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    model.script({ text: 'thinking…', delayMs: 20_000 });
    const first = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
    expect(first.status).toBe(201);
    expectError(
      await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token }),
      'AGENT_ALREADY_RUNNING',
      409,
    );
    await waitForRun(http, user.token, first.body.id, ['active']);
    // Nobody else can cancel it: another user, and an admin, are told it does not exist, and it runs on.
    const stranger = await registerUser(http);
    for (const token of [stranger.token, admin.token]) {
      expectError(await http.post(`/api/runs/${first.body.id}/cancel`, undefined, { token }), 'RUN_NOT_FOUND', 404);
    }
    expect((await http.get(`/api/runs/${first.body.id}`, { token: user.token })).body.status).toBe('active');
    model.script({ text: 'ok' });
    const cancelled = await http.post(`/api/runs/${first.body.id}/cancel`, undefined, { token: user.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    // The agent is free again as soon as the cancel has answered.
    const next = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
    expect(next.status).toBe(201);
    const run = await waitForRun(http, user.token, first.body.id);
    expect(run.timeline[run.timeline.length - 1]!.type).toBe('cancelled');
    expectError(
      await http.post(`/api/runs/${first.body.id}/cancel`, undefined, { token: user.token }),
      'RUN_NOT_CANCELLABLE',
      400,
    );
    const done = await waitForRun(http, user.token, next.body.id);
    expect(done.status).toBe('completed');
    expectError(
      await http.post(`/api/runs/${done.id}/cancel`, undefined, { token: user.token }),
      'RUN_NOT_CANCELLABLE',
      400,
    );
    expectError(
      await http.get('/api/runs/00000000-0000-4000-8000-000000000000', { token: user.token }),
      'RUN_NOT_FOUND',
      404,
    );
    expectError(await http.get(`/api/runs/${done.id}`, { token: admin.token }), 'RUN_NOT_FOUND', 404);
  });

  it('deleting an agent stops its queue first: the queue workflow is terminated and the active run cancelled', async () => {
    const { user, siteId } = await userWithSite();
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    model.script({ text: 'thinking…', delayMs: 20_000 });
    const started = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
    expect(started.status).toBe(201);
    const running = await waitForRun(http, user.token, started.body.id, ['active']);
    // The route is agents', the queue is runs': RunsModule's hook (AgentRemovalHooks) stops it.
    expect((await http.delete(`/api/agents/${agent.id}`, { token: user.token })).status).toBe(204);
    expect((await temporal.workflow.getHandle(`agent-${agent.id}`).describe()).status.name).toBe('TERMINATED');
    expect(
      (await temporal.workflow.getHandle(`agent-${agent.id}`, running.temporal.runId!).describe()).status.name,
    ).toBe('TERMINATED');
    // The run ended with the queue's execution that ran it, and went with its agent.
    expectError(await http.get(`/api/runs/${started.body.id}`, { token: user.token }), 'RUN_NOT_FOUND', 404);
    expect(await sql('SELECT id FROM runs WHERE id = $1', [started.body.id])).toEqual([]);
  });

  it('deleting an agent does not wait for a worker: with none running, the queue is still stopped', async () => {
    const { user } = await userWithSite();
    const agent = (await createAgent(user, {})).body;
    const accepted = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
    expect(accepted.status).toBe(201);
    // No worker: the queue workflow holds the run, and nobody could answer a query about it.
    await stack.stopWorker();
    try {
      const started = Date.now();
      expect((await http.delete(`/api/agents/${agent.id}`, { token: user.token })).status).toBe(204);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await temporal.workflow.getHandle(`agent-${agent.id}`).describe()).status.name).toBe('TERMINATED');
      expectError(await http.get(`/api/runs/${accepted.body.id}`, { token: user.token }), 'RUN_NOT_FOUND', 404);
    } finally {
      await stack.startWorker();
    }
  });

  it('a schedule triggered now starts a run', async () => {
    const { user, siteId } = await userWithSite('pro');
    const agent = (await createAgent(user, { siteIds: [siteId], trigger: { type: 'scheduled', cron: '0 3 1 1 *' } }))
      .body;
    model.script({ text: 'Scheduled work done.' });
    await temporal.schedule.getHandle(`schedule-${agent.id}`).trigger();
    const runs = await eventually('a scheduled run', async () => {
      const list = await http.get(`/api/agents/${agent.id}/runs`, { token: user.token });
      return list.body.items.length > 0 ? list.body.items : undefined;
    });
    expect(runs[0].triggeredBy).toBe('schedule');
    const run = await waitForRun(http, user.token, runs[0].id);
    expect(run.status).toBe('completed');
    expect(run.timeline[0]).toMatchObject({ type: 'triggered', triggeredBy: 'schedule' });
  });

  it("a firing while the agent's run is active is skipped: no row, the firing ends skipped (both where the rows show the run and where only the queue does)", async () => {
    const { user, siteId } = await userWithSite('pro');
    const agent = (await createAgent(user, { siteIds: [siteId], trigger: { type: 'scheduled', cron: '0 3 1 1 *' } }))
      .body;
    const schedule = temporal.schedule.getHandle(`schedule-${agent.id}`);
    /** Fires the schedule now and answers what its firing (the trigger workflow) returned. */
    const fire = async (seen: number): Promise<unknown> => {
      await schedule.trigger();
      const firing = await eventually('the firing', async () => {
        const actions = (await schedule.describe()).info.recentActions;
        return actions.length > seen ? actions[actions.length - 1] : undefined;
      });
      return temporal.workflow.getHandle(firing.action.workflow.workflowId).result();
    };
    model.script({ text: 'thinking…', delayMs: 20_000 });
    const manual = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
    expect(manual.status).toBe(201);
    await waitForRun(http, user.token, manual.body.id, ['active']);
    // The run's row shows it active: the firing writes no row and sends the queue nothing.
    await expect(fire(0)).resolves.toEqual({ skipped: 'the agent had a queued or active run' });
    // Its row says ended while the queue still runs it (as in the moments between a run's last turn
    // and its queue taking the next request): the firing's row is written, the queue skips the run
    // and tells the firing, which drops the row.
    await sql("UPDATE runs SET status = 'completed', ended_at = now() WHERE id = $1", [manual.body.id]);
    await expect(fire(1)).resolves.toEqual({ skipped: 'the agent had a queued or active run' });
    const queue = await temporal.workflow.getHandle(`agent-${agent.id}`).fetchHistory();
    expect(
      queue.events!.filter(
        (e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'runSkipped',
      ),
    ).toHaveLength(1);
    expect(await sql('SELECT id FROM runs WHERE agent_id = $1', [agent.id])).toEqual([{ id: manual.body.id }]);
    const list = await http.get(`/api/agents/${agent.id}/runs`, { token: user.token });
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual([manual.body.id]);
    await temporal.workflow.getHandle(`agent-${agent.id}`).terminate('test over');
  });

  it('a site 429 with Retry-After: 2 makes the run wait durably, then complete', async () => {
    const { user, siteId } = await userWithSite();
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    site.failures.push({ tool: 'list_notes', status: 429, retryAfterSeconds: 2 });
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), { text: 'Listed.' });
    const started = Date.now();
    const run = await waitForRun(
      http,
      user.token,
      (await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token })).body.id,
    );
    expect(run.status).toBe('completed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    const types = run.timeline.map((e) => e.type);
    expect(types).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'tool_result',
      'waiting',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    const waiting = run.timeline[4]!;
    expect(waiting.reason).toBe('rate_limited');
    expect(Date.parse(waiting.until) - Date.parse(waiting.at)).toBe(2000);
    expect(run.timeline[3]).toMatchObject({ ok: false, code: 'OUTGOING_RATE_LIMITED' });
  });

  it('NO_CREDITS refuses new runs, and a run that runs out mid-way fails with that code', async () => {
    const { user, siteId } = await userWithSite();
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    await http.patch(`/api/admin/users/${user.id}`, { credits: 0 }, { token: admin.token });
    expectError(await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token }), 'NO_CREDITS', 402);
    await http.patch(`/api/admin/users/${user.id}`, { credits: 2 }, { token: admin.token });
    model.script(
      (req) => ({
        toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }],
        usage: { input_tokens: 4000, output_tokens: 100 },
      }),
      { text: 'never reached' },
    );
    const run = await waitForRun(
      http,
      user.token,
      (await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token })).body.id,
    );
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('NO_CREDITS');
    expect(run.timeline[run.timeline.length - 1]).toMatchObject({ type: 'failed', code: 'NO_CREDITS' });
    expect((await http.get('/api/me', { token: user.token })).body.credits).toBe(0);
  });

  it("a tool's answer over 64 KB reaches the model and the timeline cut to its first 64 KB, with its length", async () => {
    const { user, siteId } = await userWithSite();
    for (const n of [1, 2, 3]) {
      site.createNote('alice', `long note ${n}`, 'x'.repeat(30_000));
    }
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    model.script((req) => ({ text: 'Listing.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'Listed.',
    });
    const started = await http.post(`/api/agents/${agent.id}/runs`, { input: 'List my notes' }, { token: user.token });
    const run = await waitForRun(http, user.token, started.body.id);
    expect(run.status).toBe('completed');
    const result = run.timeline.find((e) => e.type === 'tool_result')!;
    expect(result).toMatchObject({ ok: true, tool: 'list_notes' });
    expect(result.truncated).toBeGreaterThan(90_000);
    expect(typeof result.result).toBe('string');
    expect(Buffer.byteLength(result.result as string)).toBeLessThanOrEqual(64 * 1024);
    expect((result.result as string).startsWith('{"results":[')).toBe(true);
    // The model was shown the same cut text, and told it was cut.
    const shown = JSON.stringify(model.requests.at(-1)!.body.messages.at(-1));
    expect(shown).toContain(`[cut: the answer was ${result.truncated} bytes; only its first 65536 are kept]`);
  });

  it('a run whose conversation outgrows what a turn may carry fails saying so, and the agent runs on', async () => {
    const { user, siteId } = await userWithSite();
    // Each turn first holds its estimated cost (about 4 bytes a token): 1.5 MB holds some 375 credits.
    await http.patch(`/api/admin/users/${user.id}`, { credits: 10_000 }, { token: admin.token });
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    // Every answer is long and calls a tool again: the conversation grows by about 200 KB a turn.
    model.fallback = (req) => ({
      text: 'y'.repeat(150_000),
      toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }],
    });
    let run;
    try {
      const started = await http.post(`/api/agents/${agent.id}/runs`, { input: 'Go on' }, { token: user.token });
      run = await waitForRun(http, user.token, started.body.id, undefined, 120_000);
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('MODEL_ERROR');
    expect(run.error?.error).toMatch(
      /^The run's conversation has grown to \d+ bytes, over the 1500000 one model turn may carry$/,
    );
    const turns = run.timeline.filter((e) => e.type === 'model_turn').length;
    expect(turns).toBeGreaterThan(3);
    expect(turns).toBeLessThan(20);
    // The agent's queue was not stopped: its next run completes.
    model.script({ text: 'Fine.' });
    const next = await http.post(`/api/agents/${agent.id}/runs`, { input: 'Again' }, { token: user.token });
    expect(next.status).toBe(201);
    expect((await waitForRun(http, user.token, next.body.id)).status).toBe('completed');
  });

  it('a worker killed (SIGKILL) during a tool call: the run completes on a new worker, the site saw one effect', async () => {
    const { user, siteId } = await userWithSite();
    const agent = (await createAgent(user, { siteIds: [siteId] })).body;
    const effects = site.stats.effects;
    site.toolDelayMs = 2000;
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Exactly once' } }] }), {
      text: 'Created once.',
    });
    const calls = site.stats.toolCalls;
    const runId = (await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token })).body.id;
    try {
      await eventually('the tool call to reach the site', async () =>
        site.stats.toolCalls > calls ? true : undefined,
      );
      stack.worker!.child.kill('SIGKILL');
      await stopChild(stack.worker!.child);
      stack.worker = stack.spawn('worker', 'src/worker.js');
      const run = await waitForRun(http, user.token, runId, undefined, 90_000).catch((err: unknown) => {
        throw stack.explain(err, runId);
      });
      expect(run.status).toBe('completed');
      expect(site.stats.effects - effects).toBe(1);
      expect(site.notesOf('alice').filter((n) => n.title === 'Exactly once')).toHaveLength(1);
      const results = run.timeline.filter((e) => e.type === 'tool_result');
      expect(results[results.length - 1]).toMatchObject({ ok: true });
      expect(results[results.length - 1]!.attempt).toBeGreaterThanOrEqual(2);
    } finally {
      site.toolDelayMs = 0;
    }
    // Past the 90 s wait above: a slow recovery fails with the run's last view and the stack's lines about it.
  }, 150_000);
});
