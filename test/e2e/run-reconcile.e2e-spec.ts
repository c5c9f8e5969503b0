import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type Client, type Connection, WorkflowNotFoundError } from '@temporalio/client';
import pg from 'pg';
import { toolNamed } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { eventually, type RunView, waitForRun } from '../utils/runs.js';
import { temporalClient } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** What the API says of a run whose steps neither Temporal nor the archive keeps. */
const UNAVAILABLE =
  "This run's timeline is no longer available: Temporal no longer keeps its history, and no copy of it was archived";
/** A test that waits for Temporal to delete an execution. */
const DELETION_TEST_TIMEOUT_MS = 180_000;

/**
 * The run reconciler (a Temporal Schedule, runReconcileWorkflow): runs whose execution ended without
 * ending or archiving them (an operator's `temporal workflow terminate`, a deleted execution, a run
 * that ended before its archive step) are ended and archived. The tests start the reconciler's
 * workflow themselves (or trigger its schedule) rather than wait for its interval, and make their runs
 * older than the reconciler's minimum age (it never touches a run still being queued).
 */
describe('run reconciler (e2e)', () => {
  let world: World;
  let connection: Connection;
  let temporal: Client;
  let db: pg.Client;
  let taskQueue: string;

  beforeAll(async () => {
    world = await startWorld({
      // An agent's queue execution closes a second after its last run, so that tests find it closed.
      env: { OUTGOING_CALLS_PER_MINUTE: '1000', AGENT_QUEUE_EXECUTION_SECONDS: '1' },
    });
    ({ client: temporal, connection } = await temporalClient());
    db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    taskQueue = world.stack.env.TEMPORAL_TASK_QUEUE!;
  });

  beforeEach(() => {
    world.model.reset();
  });

  afterAll(async () => {
    await db?.end();
    await connection?.close();
    await world?.stop();
  });

  /** A webhook agent (its runs queue behind each other) with the reference site's tools. */
  async function webhookAgent(): Promise<{ user: TestUser; agentId: string; fire: () => Promise<string> }> {
    const { http, admin, site } = world;
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Night shift',
        systemPrompt: 'You keep notes.',
        siteIds: [added.body.id],
        trigger: { type: 'webhook', schema: [] },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    const { id: agentId, webhookSecret } = agent.body as { id: string; webhookSecret: string };
    const fire = async (): Promise<string> => {
      const accepted = await http.post(
        `/api/webhooks/agent/${agentId}`,
        { ticket: randomUUID() },
        { headers: { 'x-webhook-secret': webhookSecret } },
      );
      expect(accepted.status).toBe(202);
      return accepted.body.runId as string;
    };
    return { user, agentId, fire };
  }

  async function getRun(user: TestUser, runId: string): Promise<RunView> {
    const res = await world.http.get<RunView>(`/api/runs/${runId}`, { token: user.token });
    expect(res.status).toBe(200);
    return res.body;
  }

  /** Makes the agent's runs older than the reconciler's minimum age (five minutes). */
  async function age(agentId: string): Promise<void> {
    await db.query("UPDATE runs SET queued_at = queued_at - interval '10 minutes' WHERE agent_id = $1", [agentId]);
  }

  /** One pass of the reconciler, as its schedule starts it, to its end. */
  function reconcile(): Promise<{ examined: number; reconciled: number }> {
    return temporal.workflow.execute('runReconcileWorkflow', {
      taskQueue,
      workflowId: `test-run-reconcile-${randomUUID()}`,
      args: [],
    });
  }

  async function archiveOf(runId: string): Promise<{ timeline: RunView['timeline']; archived_at: Date } | undefined> {
    return (await db.query('SELECT timeline, archived_at FROM run_archives WHERE run_id = $1', [runId])).rows[0];
  }

  async function closed(execution: { workflowId: string; runId: string | null }): Promise<void> {
    await eventually(`${execution.runId} to close`, async () =>
      (await temporal.workflow.getHandle(execution.workflowId, execution.runId ?? undefined).describe()).status.name !==
      'RUNNING'
        ? true
        : undefined,
    );
  }

  /** Its execution closed and its own archive written (by the next execution of its queue, just after). */
  async function archivedByItsQueue(
    execution: { workflowId: string; runId: string | null },
    runId: string,
  ): Promise<void> {
    await closed(execution);
    await eventually(`run ${runId}'s own archive`, () => archiveOf(runId));
  }

  async function gone(execution: { workflowId: string; runId: string }): Promise<void> {
    await eventually(
      `${execution.runId} to be gone from Temporal`,
      async () => {
        try {
          await temporal.workflow.getHandle(execution.workflowId, execution.runId).describe();
          return undefined;
        } catch (err) {
          return err instanceof WorkflowNotFoundError ? true : undefined;
        }
      },
      120_000,
    );
  }

  it(
    "an operator terminates the agent's queue: its schedule's pass fails the active run with the reason, archives its timeline, and fails the queued runs",
    async () => {
      const { user, agentId, fire } = await webhookAgent();
      world.model.script(
        (req) => ({
          text: 'Noting it.',
          toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Shift', body: 'started' } }],
        }),
        { stall: true },
      );
      const active = await fire();
      const queued = [await fire(), await fire()];
      await eventually('the active run to wait on its second turn', async () =>
        (await getRun(user, active)).timeline.some((e) => e.type === 'tool_result') ? true : undefined,
      );
      const execution = (await getRun(user, active)).temporal;
      await temporal.workflow.getHandle(`agent-${agentId}`).terminate('runaway agent, stopped by ops');
      await closed(execution);
      await age(agentId);

      // The reconciler's own schedule, created by the worker at its start.
      const schedule = temporal.schedule.getHandle(`run-reconcile-${taskQueue}`);
      const described = await schedule.describe();
      expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'runReconcileWorkflow' });
      expect(described.action.type === 'startWorkflow' && described.action.taskQueue).toBe(taskQueue);
      expect(described.spec.intervals?.map((i) => i.every)).toEqual([600_000]);
      await schedule.trigger();
      const failed = await waitForRun(world.http, user.token, active, ['failed'], 60_000);
      expect(failed.error).toEqual({
        error: 'Terminated by an operator: runaway agent, stopped by ops',
        code: 'TERMINATED',
      });
      expect(failed.timeline.map((e) => e.type)).toEqual([
        'triggered',
        'model_turn',
        'tool_call',
        'tool_result',
        'failed',
      ]);
      expect(failed.timeline[3]).toMatchObject({ ok: true, tool: 'create_note' });
      expect(failed.timeline[4]).toMatchObject({
        type: 'failed',
        code: 'TERMINATED',
        error: 'Terminated by an operator: runaway agent, stopped by ops',
      });
      const archive = await eventually('the archive', () => archiveOf(active));
      expect(archive.timeline).toEqual(failed.timeline);

      // The runs that waited in the terminated queue are not lost silently: they failed, saying why.
      for (const runId of queued) {
        const run = await waitForRun(world.http, user.token, runId, ['failed'], 60_000);
        expect(run.startedAt).toBeNull();
        expect(run.error).toEqual({
          error: 'Terminated by an operator before it started: runaway agent, stopped by ops',
          code: 'TERMINATED',
        });
        expect(run.timeline.map((e) => e.type)).toEqual(['triggered', 'failed']);
        expect(run.timeline[1]).toMatchObject({ code: 'TERMINATED', error: run.error!.error });
      }

      // Once Temporal has deleted the execution, the run reads the same, from its archive.
      await temporal.workflowService.deleteWorkflowExecution({
        namespace: 'default',
        workflowExecution: { workflowId: execution.workflowId, runId: execution.runId! },
      });
      await gone({ workflowId: execution.workflowId, runId: execution.runId! });
      expect(await getRun(user, active)).toEqual(failed);
      // A later pass finds nothing left to do for these runs.
      await reconcile();
      expect(await archiveOf(active)).toEqual(archive);
    },
    DELETION_TEST_TIMEOUT_MS,
  );

  it('a run that ended without an archive is archived from its history, once', async () => {
    const { user, fire, agentId } = await webhookAgent();
    world.model.script(
      (req) => ({
        text: 'Noting it.',
        toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Kept', body: 'late' } }],
      }),
      { text: 'Noted.' },
    );
    const runId = await fire();
    const done = await waitForRun(world.http, user.token, runId);
    expect(done.status).toBe('completed');
    const before = await getRun(user, runId);
    await archivedByItsQueue(before.temporal, runId);
    // As a run terminated between its end and its archive step, or ended before archives existed.
    await db.query('DELETE FROM run_archives WHERE run_id = $1', [runId]);
    await db.query('UPDATE runs SET archived_at = NULL WHERE id = $1', [runId]);
    await age(agentId);

    const pass = await reconcile();
    expect(pass.reconciled).toBeGreaterThanOrEqual(1);
    const archive = await archiveOf(runId);
    // The same timeline as its own archive step wrote, but for the trigger's time (made older above).
    const after = await getRun(user, runId);
    expect(archive?.timeline).toEqual(after.timeline);
    expect(after.timeline[0]).toEqual({ ...before.timeline[0], at: after.queuedAt });
    const unaged = (run: RunView): unknown => ({ ...run, queuedAt: undefined, timeline: run.timeline.slice(1) });
    expect(unaged(after)).toEqual(unaged(before));
    expect(after.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(after.timeline.at(-1)).toMatchObject({ type: 'completed', output: 'Noted.' });

    // Idempotent: two passes at once, then another, write it no more.
    await Promise.all([reconcile(), reconcile()]);
    await reconcile();
    expect(await archiveOf(runId)).toEqual(archive);
  });

  it('a run whose execution id Temporal cannot read is archived as unavailable, and the pass goes on with the others', async () => {
    const runs = await Promise.all(
      [0, 1].map(async () => {
        const { user, fire, agentId } = await webhookAgent();
        return { user, agentId, runId: await fire() };
      }),
    );
    for (const { user, runId } of runs) {
      const done = await waitForRun(world.http, user.token, runId);
      expect(done.status).toBe('completed');
      await archivedByItsQueue(done.temporal, runId);
      await db.query('DELETE FROM run_archives WHERE run_id = $1', [runId]);
      await db.query('UPDATE runs SET archived_at = NULL WHERE id = $1', [runId]);
    }
    const [broken, sound] = runs as [(typeof runs)[0], (typeof runs)[0]];
    const complete = await getRun(sound.user, sound.runId);
    // A row whose execution id is not one Temporal takes (gRPC INVALID_ARGUMENT, not NOT_FOUND).
    await db.query("UPDATE runs SET temporal_run_id = 'not-an-execution-id' WHERE id = $1", [broken.runId]);
    await age(broken.agentId);
    await age(sound.agentId);

    const pass = await reconcile();
    expect(pass.reconciled).toBeGreaterThanOrEqual(2);
    const unreadable = await getRun(broken.user, broken.runId);
    expect(unreadable.status).toBe('completed');
    // A completed run's end entry carries its answer, which only its history had.
    expect(unreadable.timeline.map((e) => e.type)).toEqual(['triggered', 'history_unavailable']);
    expect((await archiveOf(broken.runId))?.timeline).toEqual(unreadable.timeline);
    // The other run of the same pass is archived from its history, whole.
    expect((await archiveOf(sound.runId))?.timeline.map((e) => e.type)).toEqual(complete.timeline.map((e) => e.type));
  });

  it(
    'a run whose execution was deleted before it was archived says its timeline is no longer available',
    async () => {
      const { user, fire, agentId } = await webhookAgent();
      world.model.script({ stall: true });
      const runId = await fire();
      const active = await waitForRun(world.http, user.token, runId, ['active']);
      const execution = { workflowId: active.temporal.workflowId, runId: active.temporal.runId! };
      await temporal.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: execution });
      await gone(execution);
      await age(agentId);

      await reconcile();
      const run = await getRun(user, runId);
      expect(run.status).toBe('failed');
      expect(run.error).toEqual({
        error: "The run's workflow is gone: it ended without recording the run's end",
        code: 'INTERNAL_ERROR',
      });
      expect(run.timeline).toEqual([
        expect.objectContaining({ type: 'triggered', triggeredBy: 'webhook' }),
        { at: active.startedAt, type: 'history_unavailable', message: UNAVAILABLE },
        { at: run.endedAt, type: 'failed', code: 'INTERNAL_ERROR', error: run.error!.error },
      ]);
      expect((await archiveOf(runId))?.timeline).toEqual(run.timeline);
    },
    DELETION_TEST_TIMEOUT_MS,
  );
});
