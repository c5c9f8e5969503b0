import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { decodeHistoryEvents } from '../../src/temporal/history-codec.js';
import { WORKFLOW_BUNDLE_PATH } from '../../src/temporal/worker-factory.js';
import { type FakeModel } from '../fixtures/fake-model.js';
import { expectError, type Http } from '../utils/http.js';
import { waitForRun, type RunView } from '../utils/runs.js';
import { type Stack } from '../utils/stack.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { temporalClient, testDataConverter, testPayloadCodec } from '../utils/temporal.js';

describe('webhook triggers (e2e)', () => {
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let world: World;

  beforeAll(async () => {
    world = await startWorld();
    ({ model, stack, http, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  async function webhookAgent(trigger: Record<string, unknown> = {}) {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: admin.token });
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Inbox triage',
        systemPrompt: 'Triage incoming tickets.',
        siteIds: [],
        trigger: {
          type: 'webhook',
          schema: [
            { name: 'ticket', type: 'string', required: true },
            { name: 'priority', type: 'integer' },
          ],
          ...trigger,
        },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    return { user, agent: agent.body as { id: string; webhookUrl: string; webhookSecret: string } };
  }

  function fire(agent: { id: string; webhookSecret: string }, body: unknown, headers: Record<string, string> = {}) {
    return http.post(`/api/webhooks/agent/${agent.id}`, body, {
      headers: { 'x-webhook-secret': agent.webhookSecret, ...headers },
    });
  }

  async function runCount(user: TestUser, agentId: string): Promise<number> {
    return (await http.get(`/api/agents/${agentId}/runs`, { token: user.token })).body.items.length;
  }

  it('a webhook run is queued (202), runs with the whole payload, and shows "triggered by webhook"', async () => {
    const { user, agent } = await webhookAgent();
    model.script({ text: 'Triaged.' });
    const accepted = await fire(agent, { ticket: 'Printer on fire', priority: 1, event: 'ticket.created' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ runId: expect.any(String), status: 'queued', queuePosition: 0 });
    const run = await waitForRun(http, user.token, accepted.body.runId);
    expect(run).toMatchObject({
      status: 'completed',
      triggeredBy: 'webhook',
      payload: { ticket: 'Printer on fire', priority: 1, event: 'ticket.created' },
    });
    expect(run.timeline[0]).toMatchObject({
      type: 'triggered',
      triggeredBy: 'webhook',
      payload: { ticket: 'Printer on fire', priority: 1, event: 'ticket.created' },
    });
    expect(JSON.stringify(model.requests[0]!.body.messages[0])).toContain('Printer on fire');
  });

  it('refuses a missing, wrong or wrong-length secret (401) and a payload off the schema (422), starting nothing', async () => {
    const { user, agent } = await webhookAgent();
    for (const secret of [
      undefined,
      agent.webhookSecret.slice(0, -1) + (agent.webhookSecret.endsWith('A') ? 'B' : 'A'),
      'short',
      `${agent.webhookSecret}x`,
      '',
    ]) {
      const res = await http.post(
        `/api/webhooks/agent/${agent.id}`,
        { ticket: 't' },
        { headers: secret === undefined ? {} : { 'x-webhook-secret': secret } },
      );
      expectError(res, 'WEBHOOK_SECRET_INVALID', 401);
    }
    const invalid = await fire(agent, { priority: 'high', extra: true });
    expectError(invalid, 'WEBHOOK_PAYLOAD_INVALID', 422);
    expect(invalid.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['priority', 'ticket']);
    expectError(await fire(agent, [1, 2]), 'WEBHOOK_PAYLOAD_INVALID', 422);
    expectError(
      await http.request('POST', `/api/webhooks/agent/${agent.id}`, {
        rawBody: 'ticket=x',
        headers: { 'x-webhook-secret': agent.webhookSecret, 'content-type': 'text/plain' },
      }),
      'WEBHOOK_PAYLOAD_INVALID',
      422,
    );
    expectError(
      await http.post(
        '/api/webhooks/agent/00000000-0000-4000-8000-000000000000',
        { ticket: 't' },
        { headers: { 'x-webhook-secret': 'x' } },
      ),
      'AGENT_NOT_FOUND',
      404,
    );
    expect(await runCount(user, agent.id)).toBe(0);
    expect(model.requests).toHaveLength(0);
  });

  it('action override: on, a string action replaces the system prompt; off, it is an ordinary field', async () => {
    const on = await webhookAgent({ allowActionOverride: true });
    const off = await webhookAgent({ allowActionOverride: false });
    model.script({ text: 'a' }, { text: 'b' });
    const withOverride = await waitForRun(
      http,
      on.user.token,
      (await fire(on.agent, { ticket: 'x', action: 'Only summarise.' })).body.runId,
    );
    expect(model.requests[0]!.body.system).toBe('Only summarise.');
    expect((await http.get(`/api/runs/${withOverride.id}`, { token: on.user.token })).body.systemPromptSource).toBe(
      'webhook_action',
    );
    const without = await waitForRun(
      http,
      off.user.token,
      (await fire(off.agent, { ticket: 'x', action: 'Only summarise.' })).body.runId,
    );
    expect(model.requests[1]!.body.system).toBe('Triage incoming tickets.');
    expect(JSON.stringify(model.requests[1]!.body.messages)).toContain('Only summarise.');
    expect(without.payload).toMatchObject({ action: 'Only summarise.' });
  });

  it('queuePosition counts the runs ahead: 0, 1, 2 for webhooks sent one after another to a busy agent', async () => {
    const { user, agent } = await webhookAgent();
    // The first run holds the agent for a while, so the next two wait behind it.
    model.script({ text: 'slow', delayMs: 1500 }, { text: 'second' }, { text: 'third' });
    const positions: number[] = [];
    const runIds: string[] = [];
    for (const ticket of ['a', 'b', 'c']) {
      const accepted = await fire(agent, { ticket });
      expect(accepted.status).toBe(202);
      positions.push(accepted.body.queuePosition as number);
      runIds.push(accepted.body.runId as string);
    }
    expect(positions).toEqual([0, 1, 2]);
    for (const runId of runIds) {
      expect((await waitForRun(http, user.token, runId)).status).toBe('completed');
    }
  });

  it('12 concurrent webhooks to a busy agent get distinct positions 1..12, each its place in the queue', async () => {
    const { user, agent } = await webhookAgent();
    let open!: () => void;
    // The first run holds the agent until the burst has been answered: every other run waits.
    model.script({ text: 'held', gate: new Promise<void>((resolve) => (open = resolve)) });
    model.fallback = { text: 'handled' };
    const runIds: string[] = [];
    try {
      const first = await fire(agent, { ticket: 'first' });
      expect(first.body.queuePosition).toBe(0);
      runIds.push(first.body.runId as string);
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => fire(agent, { ticket: `c${i}` })));
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(202));
      runIds.push(...answers.map((a) => a.body.runId as string));
      const positions = answers.map((a) => a.body.queuePosition as number);
      expect([...positions].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      // True: each answer's position is its run's place in the order the agent's queue received them.
      const arrival = await acceptedRunIds(`agent-${agent.id}`, 13);
      expect(answers.map((a) => arrival.indexOf(a.body.runId as string))).toEqual(positions);
    } finally {
      open();
    }
    try {
      for (const runId of runIds) {
        expect((await waitForRun(http, user.token, runId, undefined, 120_000)).status).toBe('completed');
      }
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });

  it('a repeated X-Webhook-Delivery-Id returns the first delivery run', async () => {
    const { user, agent } = await webhookAgent();
    model.script({ text: 'once' });
    const first = await fire(agent, { ticket: 'dup' }, { 'x-webhook-delivery-id': 'evt_123' });
    const second = await fire(agent, { ticket: 'dup' }, { 'x-webhook-delivery-id': 'evt_123' });
    expect(second.status).toBe(202);
    expect(second.body.runId).toBe(first.body.runId);
    await waitForRun(http, user.token, first.body.runId);
    const third = await fire(agent, { ticket: 'dup' }, { 'x-webhook-delivery-id': 'evt_123' });
    expect(third.body.runId).toBe(first.body.runId);
    expect(await runCount(user, agent.id)).toBe(1);
  });

  it('20 concurrent webhooks to one agent: 20 runs, one at a time, in arrival order', async () => {
    const { user, agent } = await webhookAgent();
    model.fallback = { text: 'handled', delayMs: 50 };
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => fire(agent, { ticket: `t${i}` })));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
      for (const answer of answers) {
        expect(answer.body.queuePosition).toBeGreaterThanOrEqual(0);
        expect(answer.body.queuePosition).toBeLessThan(20);
      }
      const runs = new Map<string, RunView>();
      for (const answer of answers) {
        runs.set(answer.body.runId, await waitForRun(http, user.token, answer.body.runId, undefined, 120_000));
      }
      expect([...runs.values()].every((r) => r.status === 'completed')).toBe(true);
      // Arrival order: the order in which the agent's queue received the requests (its histories).
      const arrival = await acceptedRunIds(`agent-${agent.id}`, 20);
      expect([...arrival].sort()).toEqual([...runs.keys()].sort());
      const ordered = arrival.map((id) => runs.get(id)!);
      for (let i = 1; i < ordered.length; i += 1) {
        // Each run starts only after the one before it (in arrival order) has ended: never two active.
        expect(Date.parse(ordered[i]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(ordered[i - 1]!.endedAt!));
      }
      // The model saw the tickets in arrival order too.
      const seen = model.requests.map((r) => /t\d+/.exec(JSON.stringify(r.body.messages[0]!.content))?.[0]);
      expect(seen).toEqual(ordered.map((run) => (run.payload as { ticket: string }).ticket));
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });

  it('25 webhooks of 200 KB to a busy agent all run, each with its payload, which Temporal never carries', async () => {
    const { user, agent } = await webhookAgent();
    const blob = 'p'.repeat(200 * 1024);
    // The first run holds the agent while the other 24 arrive: 5 MB of payloads wait at once.
    model.script({ text: 'first, slowly', delayMs: 2000 });
    model.fallback = { text: 'handled' };
    try {
      const runIds: string[] = [];
      for (let i = 0; i < 25; i += 1) {
        const accepted = await fire(agent, { ticket: `big-${i}`, blob });
        expect(accepted.status).toBe(202);
        runIds.push(accepted.body.runId as string);
      }
      // A waiting run reads as any other (its timeline comes from the queue's history).
      const waiting = await http.get(`/api/runs/${runIds[24]}`, { token: user.token });
      expect(waiting.status).toBe(200);
      expect(waiting.body).toMatchObject({ status: 'queued', payload: { ticket: 'big-24', blob } });
      for (const runId of runIds) {
        expect((await waitForRun(http, user.token, runId, undefined, 120_000)).status).toBe('completed');
      }
      // Every run's first message to the model carried its own payload, whole, read from its row.
      const firsts = model.requests.map((r) => String(r.body.messages[0]!.content));
      for (let i = 0; i < 25; i += 1) {
        expect(firsts.filter((m) => m.includes(`"ticket": "big-${i}"`) && m.includes(blob))).toHaveLength(1);
      }
      // The queue's executions hold ids and small requests: far less than the 5 MB of payloads.
      const { client, connection } = await temporalClient();
      try {
        let executions = 0;
        for await (const wf of client.workflow.list({ query: `WorkflowId = "agent-${agent.id}"` })) {
          const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
          expect(proto.temporal.api.history.v1.History.encode(history).finish().length).toBeLessThan(500_000);
          executions += 1;
        }
        expect(executions).toBeGreaterThan(0);
      } finally {
        await connection.close();
      }
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });

  /**
   * Run ids in the order the agent's queue received them: its executions in the order they started
   * (each continues as new after a run), each execution's history in order. A request carried over to
   * the next execution appears once, in the history that received it.
   */
  async function acceptedRunIds(workflowId: string, expected: number): Promise<string[]> {
    const { client, connection } = await temporalClient();
    try {
      let ids: string[] = [];
      for (let tries = 0; tries < 50 && ids.length < expected; tries += 1) {
        const executions = [];
        for await (const wf of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
          executions.push(wf);
        }
        executions.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
        ids = [];
        for (const execution of executions) {
          const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
          // fetchHistory hands back the payloads as stored: encrypted; decode them as the timeline does.
          await decodeHistoryEvents(history.events ?? [], testPayloadCodec());
          // Updates (manual, schedule) and signals (webhooks) both enqueue, in history order.
          ids.push(
            ...(history.events ?? [])
              .map(
                (e) =>
                  e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0] ??
                  (e.workflowExecutionSignaledEventAttributes?.signalName === 'enqueueRunSignal'
                    ? e.workflowExecutionSignaledEventAttributes.input?.payloads?.[0]
                    : undefined),
              )
              .filter((p) => p !== undefined && p !== null)
              .map((p) => defaultPayloadConverter.fromPayload<{ runId: string }>(p!).runId),
          );
        }
        if (ids.length < expected) {
          // Visibility lists an execution a moment after it starts.
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      return ids;
    } finally {
      await connection.close();
    }
  }

  it('replays the recorded histories of these runs with the current workflow code (determinism)', async () => {
    const { client, connection } = await temporalClient();
    try {
      const histories = [];
      // Closed executions and the queues still waiting (replayed up to where they are): the agents'
      // queues run their runs themselves, several to an execution when they are quick.
      for await (const wf of client.workflow.list({ query: `TaskQueue = "${stack.env.TEMPORAL_TASK_QUEUE}"` })) {
        histories.push({
          workflowId: wf.workflowId,
          history: await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory(),
        });
      }
      expect(histories.length).toBeGreaterThan(5);
      const results = Worker.runReplayHistories(
        { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH }, dataConverter: testDataConverter() },
        histories,
      );
      let replayed = 0;
      for await (const result of results) {
        expect(result.error).toBeUndefined();
        replayed += 1;
      }
      expect(replayed).toBe(histories.length);
    } finally {
      await connection.close();
    }
  });
});

describe('a full webhook queue (e2e, MAX_QUEUED_RUNS=3)', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld({ env: { MAX_QUEUED_RUNS: '3' } });
  });

  afterAll(async () => {
    await world?.stop();
  });

  it('refuses a delivery with 3 runs ahead (RATE_LIMITED, Retry-After) and keeps nothing of it; the accepted ones run', async () => {
    const { http, admin, model } = world;
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: admin.token });
    const agent = (
      await http.post(
        '/api/agents',
        { name: 'Busy', systemPrompt: 'p', siteIds: [], trigger: { type: 'webhook', schema: [] } },
        { token: user.token },
      )
    ).body as { id: string; webhookSecret: string };
    const fire = (body: unknown, headers: Record<string, string> = {}) =>
      http.post(`/api/webhooks/agent/${agent.id}`, body, {
        headers: { 'x-webhook-secret': agent.webhookSecret, ...headers },
      });
    model.script({ text: 'slow', delayMs: 2000 });
    const accepted = [];
    for (const n of [0, 1, 2]) {
      const res = await fire({ n });
      expect(res.status).toBe(202);
      expect(res.body.queuePosition).toBe(n);
      accepted.push(res.body.runId as string);
    }
    const refused = await fire({ n: 3 }, { 'x-webhook-delivery-id': 'full-queue-1' });
    expectError(refused, 'RATE_LIMITED', 429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body.error).toContain('3 runs queued or running');
    const listed = (await http.get(`/api/agents/${agent.id}/runs`, { token: user.token })).body.items as Array<{
      id: string;
    }>;
    expect(listed.map((r) => r.id).sort()).toEqual([...accepted].sort());
    for (const runId of accepted) {
      expect((await waitForRun(http, user.token, runId)).status).toBe('completed');
    }
    // Sent again once the queue has room, the refused delivery is accepted as a new run.
    const again = await fire({ n: 3 }, { 'x-webhook-delivery-id': 'full-queue-1' });
    expect(again.status).toBe(202);
    expect(accepted).not.toContain(again.body.runId);
    expect((await waitForRun(http, user.token, again.body.runId)).status).toBe('completed');
  });
});
