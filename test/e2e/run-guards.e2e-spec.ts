import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import type { forgedModelTurnWorkflow } from '../fixtures/forged-model-turn.workflow.js';
import type {
  forgedDropScheduledRunWorkflow,
  forgedFinishRunWorkflow,
  forgedScheduledRunWorkflow,
} from '../fixtures/forged-records.workflow.js';
import type { forgedToolCallWorkflow } from '../fixtures/forged-tool-call.workflow.js';
import { testEnv } from '../setup/shared-runtime.js';
import type { Http } from '../utils/http.js';
import { sql } from '../utils/db.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { temporalClient, testDataConverter } from '../utils/temporal.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import type {
  CallToolInput,
  CallToolOutput,
  FinishRunInput,
  ModelMessage,
  ModelTurnInput,
  ModelTurnOutput,
  RunRequest,
  ScheduledTriggerResult,
} from '../../workflows/contracts.js';

interface Forger {
  toolCall(input: CallToolInput): Promise<CallToolOutput>;
  /** `workflowId`, here and below: the forged workflow's own id (default `forged-<uuid>`). */
  modelTurn(input: ModelTurnInput, workflowId?: string): Promise<ModelTurnOutput>;
  finishRun(input: FinishRunInput, workflowId?: string): Promise<void>;
  /** A null agent id sends a null input (as anyone may). */
  scheduledRun(agentId: string | null, workflowId?: string): Promise<ScheduledTriggerResult>;
  /** A null agent id sends a null input. */
  dropScheduledRun(agentId: string | null, runId: string, workflowId?: string): Promise<void>;
}

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** What the worker checks of its own inputs, and how long a site may make a run wait. */
describe('run guards: forged activity tasks and Retry-After caps (e2e)', () => {
  let world: World;
  let http: Http;
  let site: ReferenceSite;
  let model: FakeModel;
  let admin: TestUser;

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000' } });
    ({ http, site, model, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  async function userWithSite(username: 'alice' | 'root'): Promise<{ user: TestUser; siteId: string }> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken(username).token },
      { token: user.token },
    );
    return { user, siteId: added.body.id };
  }

  async function runOnce(user: TestUser, siteId: string) {
    const agent = await http.post(
      '/api/agents',
      { name: 'Guarded', systemPrompt: 'You keep notes.', siteIds: [siteId], trigger: { type: 'manual' } },
      { token: user.token },
    );
    const started = await http.post(`/api/agents/${agent.body.id}/runs`, {}, { token: user.token });
    return { agentId: agent.body.id as string, runId: started.body.id as string };
  }

  /**
   * A worker of our own, on a queue of our own, running a fixture workflow that schedules one of the
   * service's activities on the service's queue with an input of its own making.
   */
  async function asForger(fixture: string, body: (forge: Forger) => Promise<void>): Promise<void> {
    const taskQueue = `forger-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const nativeConnection = await NativeConnection.connect({ address: testEnv('temporalAddress') });
    const { client, connection } = await temporalClient();
    try {
      const worker = await Worker.create({
        connection: nativeConnection,
        taskQueue,
        workflowsPath: path.join(fixtures, fixture),
        dataConverter: testDataConverter(),
      });
      const serviceQueue = world.stack.env.TEMPORAL_TASK_QUEUE!;
      await worker.runUntil(() =>
        body({
          toolCall: (input) =>
            client.workflow.execute<typeof forgedToolCallWorkflow>('forgedToolCallWorkflow', {
              taskQueue,
              workflowId: `forged-${randomUUID()}`,
              args: [serviceQueue, input],
            }),
          modelTurn: (input, workflowId) =>
            client.workflow.execute<typeof forgedModelTurnWorkflow>('forgedModelTurnWorkflow', {
              taskQueue,
              workflowId: workflowId ?? `forged-${randomUUID()}`,
              args: [serviceQueue, input],
            }),
          finishRun: (input, workflowId) =>
            client.workflow.execute<typeof forgedFinishRunWorkflow>('forgedFinishRunWorkflow', {
              taskQueue,
              workflowId: workflowId ?? `forged-${randomUUID()}`,
              args: [serviceQueue, input],
            }),
          scheduledRun: (agentId, workflowId) =>
            client.workflow.execute<typeof forgedScheduledRunWorkflow>('forgedScheduledRunWorkflow', {
              taskQueue,
              workflowId: workflowId ?? `forged-${randomUUID()}`,
              args: [serviceQueue, agentId === null ? (null as never) : { agentId }],
            }),
          dropScheduledRun: (agentId, runId, workflowId) =>
            client.workflow.execute<typeof forgedDropScheduledRunWorkflow>('forgedDropScheduledRunWorkflow', {
              taskQueue,
              workflowId: workflowId ?? `forged-${randomUUID()}`,
              args: [serviceQueue, agentId === null ? (null as never) : { agentId, runId }],
            }),
        }),
      );
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  }

  /** The cause of a forged workflow's failure: the activity's ApplicationFailure. */
  function refusal(err: unknown): ApplicationFailure {
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const activity = (err as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    const cause = (activity as ActivityFailure).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    return cause;
  }

  const toolCall = (runId: string, userId: string, siteId: string): CallToolInput => ({
    runId,
    userId,
    siteId,
    siteName: 'Reference Notebook',
    tool: 'list_notes',
    input: {},
  });

  it('a callTool task naming another user’s site, or a run that is not active, is refused (PERMISSION_DENIED); the site receives nothing', async () => {
    const attacker = await userWithSite('alice');
    const victim = await userWithSite('root');
    await asForger('forged-tool-call.workflow.js', async (forge) => {
      // The attacker's own run, held active by a slow model answer while the tasks are forged.
      model.script({ text: 'Nothing to do.', delayMs: 8_000 });
      const { runId } = await runOnce(attacker.user, attacker.siteId);
      await waitForRun(http, attacker.user.token, runId, ['active']);

      // The control: the same forged path with the run's own site, on the active run, reaches the
      // site, so the path is real.
      const before = site.stats.toolCalls;
      const own = await forge.toolCall(toolCall(runId, attacker.user.id, attacker.siteId));
      expect(own.result).toEqual(expect.objectContaining({ results: expect.any(Array) }));
      expect(site.stats.toolCalls).toBe(before + 1);
      expect(site.lastToolRequest?.headers.authorization).toBeDefined();

      const callsBefore = site.stats.toolCalls;
      const cause = refusal(await forge.toolCall(toolCall(runId, attacker.user.id, victim.siteId)).catch((e) => e));
      expect(cause.type).toBe('PERMISSION_DENIED');
      expect(cause.nonRetryable).toBe(true);
      expect(site.stats.toolCalls).toBe(callsBefore); // the victim's credential was never used

      // An id that is not a uuid is refused the same way, before any query.
      const malformed = await forge.toolCall(toolCall(runId, attacker.user.id, 'not-a-uuid')).catch((e) => e);
      expect(refusal(malformed).type).toBe('PERMISSION_DENIED');

      // Once the run has ended, even its own site is refused.
      expect((await waitForRun(http, attacker.user.token, runId)).status).toBe('completed');
      const ended = await forge.toolCall(toolCall(runId, attacker.user.id, attacker.siteId)).catch((e) => e);
      expect(refusal(ended).type).toBe('PERMISSION_DENIED');
      expect(site.stats.toolCalls).toBe(callsBefore);
    });
    expect(world.stack.logs()).toMatch(/tool call refused for run .*: the site is not in the vault/);
    expect(world.stack.logs()).toMatch(/tool call refused for run .*: the run is completed, not active/);
  });

  it('a callTool task naming a site of the owner’s vault that is not one of the agent’s sites is refused, on an active run', async () => {
    const victim = await userWithSite('root');
    // The agent has no site; the vault has one.
    const agent = await http.post(
      '/api/agents',
      { name: 'Siteless', systemPrompt: 'You think.', siteIds: [], trigger: { type: 'manual' } },
      { token: victim.user.token },
    );
    expect(agent.status).toBe(201);
    await asForger('forged-tool-call.workflow.js', async (forge) => {
      model.script({ text: 'Thought about it.', delayMs: 6_000 });
      const started = await http.post(`/api/agents/${agent.body.id}/runs`, {}, { token: victim.user.token });
      const runId = started.body.id as string;
      await waitForRun(http, victim.user.token, runId, ['active']);

      const callsBefore = site.stats.toolCalls;
      const cause = refusal(await forge.toolCall(toolCall(runId, victim.user.id, victim.siteId)).catch((e) => e));
      expect(cause.type).toBe('PERMISSION_DENIED');
      expect(cause.nonRetryable).toBe(true);
      expect(site.stats.toolCalls).toBe(callsBefore);
      expect((await waitForRun(http, victim.user.token, runId)).status).toBe('completed');
    });
    expect(world.stack.logs()).toMatch(/tool call refused for run .*: the site is not one of the run’s agent’s sites/);
  });

  it('a modelTurn task that starts a run the API never queued, or charges a user for a run not theirs, is refused; no row, no model call, no charge', async () => {
    const attacker = await userWithSite('alice');
    const victim = await userWithSite('root');
    const agent = await http.post(
      '/api/agents',
      { name: 'Victim', systemPrompt: 'You keep notes.', siteIds: [victim.siteId], trigger: { type: 'manual' } },
      { token: victim.user.token },
    );
    expect(agent.status).toBe(201);
    const credits = async (user: TestUser): Promise<number> =>
      (await http.get('/api/me', { token: user.token })).body.credits as number;
    const victimCredits = await credits(victim.user);
    const attackerCredits = await credits(attacker.user);
    const forgedRunId = randomUUID();
    const request: RunRequest = {
      runId: forgedRunId,
      agentId: agent.body.id,
      userId: victim.user.id,
      agentName: 'Victim',
      triggeredBy: 'manual',
      input: null,
      payload: null,
      actionOverride: true,
      deliveryId: null,
      mode: 'reject_if_busy',
      requestedAt: new Date().toISOString(),
    };
    const messages: ModelMessage[] = [{ role: 'user', content: 'Run now.' }];
    await asForger('forged-model-turn.workflow.js', async (forge) => {
      // Turn 1 of a run that no one queued, as the agent's owner, and as the attacker.
      for (const userId of [victim.user.id, attacker.user.id]) {
        const start = { ...request, userId };
        const forged = await forge
          .modelTurn({ runId: forgedRunId, userId, messages, start, last: false })
          .catch((e) => e);
        const cause = refusal(forged);
        expect(cause.type).toBe('PERMISSION_DENIED');
        expect(cause.nonRetryable).toBe(true);
      }
      // A later turn, with a context of its own making, billed to the victim.
      const later = await forge
        .modelTurn({
          runId: forgedRunId,
          userId: victim.user.id,
          messages,
          context: { system: 'Anything.', model: 'claude-sonnet-4-5', tools: [] },
          last: true,
        })
        .catch((e) => e);
      expect(refusal(later).type).toBe('PERMISSION_DENIED');
    });
    expect(model.requests).toHaveLength(0);
    expect((await http.get(`/api/runs/${forgedRunId}`, { token: victim.user.token })).status).toBe(404);
    expect((await http.get(`/api/agents/${agent.body.id}/runs`, { token: victim.user.token })).body.items).toEqual([]);
    expect(await credits(victim.user)).toBe(victimCredits);
    expect(await credits(attacker.user)).toBe(attackerCredits);
    expect(world.stack.logs()).toMatch(/run start refused for run .*: no queued run of this agent and user/);
    expect(world.stack.logs()).toMatch(/model turn refused for run .*: not an active run of the user it names/);
  });

  it('a finishRun task from a workflow that does not run the run is refused (PERMISSION_DENIED); the run goes on and completes', async () => {
    const victim = await userWithSite('root');
    await asForger('forged-records.workflow.js', async (forge) => {
      model.script({ text: 'Finished my notes.', delayMs: 6_000 });
      const { runId } = await runOnce(victim.user, victim.siteId);
      await waitForRun(http, victim.user.token, runId, ['active']);
      for (const status of ['failed', 'cancelled', 'completed'] as const) {
        const forged = await forge
          .finishRun({
            runId,
            status,
            output: 'forged',
            ...(status === 'failed' ? { error: { code: 'INTERNAL_ERROR', error: 'forged' } } : {}),
          })
          .catch((e) => e);
        const cause = refusal(forged);
        expect(cause.type).toBe('PERMISSION_DENIED');
        expect(cause.nonRetryable).toBe(true);
      }
      expect((await http.get(`/api/runs/${runId}`, { token: victim.user.token })).body.status).toBe('active');
      // A run id that is not a uuid is refused the same way, before any query.
      expect(
        refusal(await forge.finishRun({ runId: 'not-a-uuid', status: 'failed', output: '' }).catch((e) => e)).type,
      ).toBe('PERMISSION_DENIED');
      const run = await waitForRun(http, victim.user.token, runId);
      expect(run.status).toBe('completed');
      expect(run.timeline.at(-1)).toMatchObject({ type: 'completed' });
    });
    expect(world.stack.logs()).toMatch(
      /run finish refused for run .* asked by workflow forged-.*: the run is not this workflow execution/,
    );
  });

  it('a workflow named after a queued run (`run-<runId>`) can neither start nor end it: only its agent’s queue can', async () => {
    const { user, siteId } = await userWithSite('root');
    const agent = await http.post(
      '/api/agents',
      { name: 'Hooked', systemPrompt: 'You keep notes.', siteIds: [siteId], trigger: { type: 'webhook', schema: [] } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    const fire = () =>
      http.post(
        `/api/webhooks/agent/${agent.body.id}`,
        {},
        { headers: { 'x-webhook-secret': agent.body.webhookSecret } },
      );
    // The first run holds the queue while the forger tries the second (cancelled after).
    model.script({ text: 'First.', delayMs: 120_000 }, { text: 'Second.' });
    const first = await fire();
    await waitForRun(http, user.token, first.body.runId, ['active']);
    const second = await fire();
    expect(second.body).toMatchObject({ status: 'queued', queuePosition: 1 });
    const runId = second.body.runId as string;
    await asForger('forged-records.workflow.js', async (forge) => {
      const forged = await forge
        .finishRun({ runId, status: 'failed', error: { code: 'INTERNAL_ERROR', error: 'forged' } }, `run-${runId}`)
        .catch((e) => e);
      expect(refusal(forged).type).toBe('PERMISSION_DENIED');
    });
    const request: RunRequest = {
      runId,
      agentId: agent.body.id,
      userId: user.id,
      agentName: 'Hooked',
      triggeredBy: 'webhook',
      input: null,
      payload: null,
      actionOverride: null,
      deliveryId: null,
      mode: 'queue',
      requestedAt: new Date().toISOString(),
    };
    await asForger('forged-model-turn.workflow.js', async (forge) => {
      const forged = await forge
        .modelTurn({ runId, userId: user.id, messages: [], start: request, last: false }, `run-${runId}`)
        .catch((e) => e);
      expect(refusal(forged).type).toBe('PERMISSION_DENIED');
    });
    // Still queued, and run by its queue in turn.
    expect((await http.get(`/api/runs/${runId}`, { token: user.token })).body.status).toBe('queued');
    const cancelled = await http.post(`/api/runs/${first.body.runId}/cancel`, undefined, { token: user.token });
    expect(cancelled.body.status).toBe('cancelled');
    const run = await waitForRun(http, user.token, runId);
    expect(run).toMatchObject({ status: 'completed', temporal: { workflowId: `agent-${agent.body.id}` } });
    expect(model.requests).toHaveLength(2);
  });

  it('an enqueueScheduledRun task from a workflow that is not a firing of the agent’s schedule is refused; no run is queued, a real firing still runs', async () => {
    const unexpectedFailures = (): number => (world.stack.logs().match(/unexpected failure \(reference/g) ?? []).length;
    const unexpectedBefore = unexpectedFailures();
    const { user, siteId } = await userWithSite('alice');
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Yearly',
        systemPrompt: 'You keep notes.',
        siteIds: [siteId],
        trigger: { type: 'scheduled', cron: '0 3 1 1 *' },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    const agentId = agent.body.id as string;
    await asForger('forged-records.workflow.js', async (forge) => {
      // Any workflow id, and the schedule's own id pattern from a workflow of another type; and no input at all.
      for (const [forAgent, workflowId] of [
        [agentId, undefined],
        [agentId, `scheduled-${agentId}-2020-01-01T00:00:00Z`],
        [null, `scheduled-${agentId}-2020-01-01T00:00:00Z`],
      ] as const) {
        const cause = refusal(await forge.scheduledRun(forAgent, workflowId).catch((e) => e));
        expect(cause.type).toBe('PERMISSION_DENIED');
        expect(cause.nonRetryable).toBe(true);
      }
    });
    expect((await http.get(`/api/agents/${agentId}/runs`, { token: user.token })).body.items).toEqual([]);
    expect(world.stack.logs()).toMatch(/scheduled run refused for agent .* not a firing of the agent's schedule/);

    // The control: the agent's schedule, fired now, queues and runs a run.
    model.script({ text: 'Scheduled work done.' });
    const { client, connection } = await temporalClient();
    try {
      await client.schedule.getHandle(`schedule-${agentId}`).trigger();
    } finally {
      await connection.close();
    }
    const runs = await eventually('a scheduled run', async () => {
      const list = await http.get(`/api/agents/${agentId}/runs`, { token: user.token });
      return list.body.items.length > 0 ? list.body.items : undefined;
    });
    expect(runs[0].triggeredBy).toBe('schedule');
    expect((await waitForRun(http, user.token, runs[0].id)).status).toBe('completed');

    // Dropping a firing's run is the firing's own: any other workflow (or no input) is refused, and a
    // queued scheduled row (the only kind a drop deletes) stays.
    const queuedId = randomUUID();
    await sql(
      'INSERT INTO runs (id, agent_id, user_id, status, triggered_by, system_prompt_source, workflow_id, queued_at) ' +
        "VALUES ($1, $2, $3, 'queued', 'schedule', 'agent', $4, now())",
      [queuedId, agentId, user.id, `agent-${agentId}`],
    );
    try {
      await asForger('forged-records.workflow.js', async (forge) => {
        for (const [forAgent, workflowId] of [
          [agentId, undefined],
          [agentId, `scheduled-${agentId}-2020-01-01T00:00:01Z`],
          [null, `scheduled-${agentId}-2020-01-01T00:00:01Z`],
        ] as const) {
          const cause = refusal(await forge.dropScheduledRun(forAgent, queuedId, workflowId).catch((e) => e));
          expect(cause.type).toBe('PERMISSION_DENIED');
        }
      });
      expect(await sql('SELECT status FROM runs WHERE id = $1', [queuedId])).toEqual([{ status: 'queued' }]);
    } finally {
      await sql('DELETE FROM runs WHERE id = $1', [queuedId]);
    }
    // No forged task reached the worker's unexpected-failure path (an input it could not read).
    expect(unexpectedFailures()).toBe(unexpectedBefore);
  });

  it('a site asking to wait longer than 300 s fails the tool call at once; the run goes on and shows it', async () => {
    const { user, siteId } = await userWithSite('alice');
    site.failures.push({ tool: 'list_notes', status: 429, retryAfterSeconds: 100_000 });
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), { text: 'Gave up.' });
    const started = Date.now();
    const { runId } = await runOnce(user, siteId);
    const run = await waitForRun(http, user.token, runId, undefined, 30_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(run.status).toBe('completed');
    expect(run.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(run.timeline[3]).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_ERROR', attempt: 1 });
    expect(run.timeline[3]!.error).toContain('asked to wait 100000 s');
    expect(run.timeline[3]!.error).toContain('300 s cap');
  });
});
