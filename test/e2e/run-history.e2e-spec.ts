import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type Client, type Connection, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import pg from 'pg';
import { stopChild } from '../../scripts/runtime/processes.js';
import { toolNamed } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { expectError } from '../utils/http.js';
import { eventually, type RunView, waitForRun } from '../utils/runs.js';
import { temporalClient } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** The service's own retention in this suite: runs older than this many days are deleted. */
const RETENTION_DAYS = 30;
/** A test that waits for Temporal to delete an execution (see executionGone). */
const DELETION_TEST_TIMEOUT_MS = 180_000;

describe('run history outlives Temporal, and old runs are deleted (e2e)', () => {
  let world: World;
  let connection: Connection;
  let temporal: Client;
  let db: pg.Client;

  beforeAll(async () => {
    world = await startWorld({
      // An agent's queue execution closes a second after its last run (not ten minutes), so that the
      // tests can delete it.
      env: {
        RUN_RETENTION_DAYS: String(RETENTION_DAYS),
        OUTGOING_CALLS_PER_MINUTE: '1000',
        AGENT_QUEUE_EXECUTION_SECONDS: '1',
      },
    });
    // With the stacks' payload key: describe() decodes the run's memo.
    ({ client: temporal, connection } = await temporalClient());
    db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
  });

  beforeEach(() => {
    world.model.reset();
  });

  afterAll(async () => {
    await db?.end();
    await connection?.close();
    await world?.stop();
  });

  async function userWithAgent(): Promise<{ user: TestUser; agentId: string }> {
    const { http, admin, site } = world;
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const agent = await http.post(
      '/api/agents',
      { name: 'Archivist', systemPrompt: 'You keep notes.', siteIds: [added.body.id], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    return { user, agentId: agent.body.id };
  }

  async function startRun(user: TestUser, agentId: string, input?: string): Promise<string> {
    const started = await world.http.post(`/api/agents/${agentId}/runs`, input ? { input } : {}, {
      token: user.token,
    });
    expect(started.status).toBe(201);
    return started.body.id as string;
  }

  async function getRun(user: TestUser, runId: string): Promise<RunView> {
    const res = await world.http.get<RunView>(`/api/runs/${runId}`, { token: user.token });
    expect(res.status).toBe(200);
    return res.body;
  }

  /** The execution of the agent's queue that ran the run (it runs each run itself). */
  async function executionOf(user: TestUser, runId: string): Promise<{ workflowId: string; runId: string }> {
    const { temporal: execution } = await getRun(user, runId);
    expect(execution.workflowId).toMatch(/^agent-/);
    return { workflowId: execution.workflowId, runId: execution.runId! };
  }

  /**
   * Deletes the execution that ran the run from Temporal, as its retention would, once it has closed
   * (the queue continues as new about a second after a quick run) and its runs are archived, and
   * waits until it is gone. The execution after the hand-over archives them, reading the closed one's
   * history: retention keeps that for days, while a deletion at the close could come first.
   */
  async function deleteFromTemporal(user: TestUser, runId: string): Promise<void> {
    const execution = await executionOf(user, runId);
    await eventually(`${execution.runId} to close`, async () =>
      (await temporal.workflow.getHandle(execution.workflowId, execution.runId).describe()).status.name !== 'RUNNING'
        ? true
        : undefined,
    );
    await eventually(`run ${runId} archived at the hand-over`, async () =>
      (await db.query('SELECT 1 FROM run_archives WHERE run_id = $1', [runId])).rows.length > 0 ? true : undefined,
    );
    await temporal.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: execution });
    await executionGone(execution);
  }

  /**
   * Temporal deletes an execution asynchronously, once its queues have acknowledged the close (a
   * second or two on the test run's server, TEST_DEV_SERVER_DYNAMIC_CONFIG; 20-35 s with Temporal's
   * default ack interval): waits until describe() no longer finds it.
   */
  async function executionGone(execution: { workflowId: string; runId: string }): Promise<void> {
    await eventually(
      `${execution.workflowId} ${execution.runId} to be gone from Temporal`,
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
    'a completed run with a tool call reads the same, entry for entry, after Temporal deleted its execution',
    async () => {
      const { user, agentId } = await userWithAgent();
      // A NUL in the tool's input and result: the stored timeline keeps it (PostgreSQL's jsonb refuses it).
      world.model.script(
        (req) => ({
          text: 'Noting it.',
          toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Kept', body: 'for\u0000good' } }],
        }),
        { text: 'The note is kept.', usage: { input_tokens: 1200, output_tokens: 300 } },
      );
      const runId = await startRun(user, agentId, 'Keep a note');
      const done = await waitForRun(world.http, user.token, runId);
      expect(done.status).toBe('completed');
      const before = await getRun(user, runId);
      expect(before.timeline.map((e) => e.type)).toEqual([
        'triggered',
        'model_turn',
        'tool_call',
        'tool_result',
        'model_turn',
        'completed',
      ]);
      expect(before.timeline[0]).toMatchObject({ triggeredBy: 'manual', input: 'Keep a note' });
      expect(before.timeline[2]).toMatchObject({
        tool: 'create_note',
        input: { title: 'Kept', body: 'for\u0000good' },
      });
      expect(before.timeline[3]).toMatchObject({ ok: true, result: { title: 'Kept' } });
      expect(before.timeline[5]).toMatchObject({ output: 'The note is kept.' });
      expect(before.usage.inputTokens).toBeGreaterThan(1200);

      await deleteFromTemporal(user, runId);
      const after = await getRun(user, runId);
      expect(after).toEqual(before);
      // The list shows it as before too.
      const listed = await world.http.get(`/api/agents/${agentId}/runs`, { token: user.token });
      expect(listed.body.items[0]).toMatchObject({ id: runId, status: 'completed', usage: before.usage });
    },
    DELETION_TEST_TIMEOUT_MS,
  );

  it(
    'failed and cancelled runs are archived too; the archive is what the history reads',
    async () => {
      const { user, agentId } = await userWithAgent();
      // A 400 from the provider cannot pass: the run fails at once with MODEL_ERROR.
      world.model.script({ status: 400 });
      const failedId = await startRun(user, agentId);
      const failed = await waitForRun(world.http, user.token, failedId);
      expect(failed.status).toBe('failed');
      const failedBefore = await getRun(user, failedId);
      expect(failedBefore.timeline[failedBefore.timeline.length - 1]).toMatchObject({
        type: 'failed',
        code: 'MODEL_ERROR',
      });

      // What the API read from the history while it had no archive: the same entries; only the time of
      // the closing entry differs (the archive is written as the queue's execution hands over, just
      // before its close event: AGENT_QUEUE_EXECUTION_SECONDS, 1 s here, after the run began).
      const archive = await eventually(
        'the failed run archived at the hand-over',
        async () =>
          (await db.query('SELECT timeline FROM run_archives WHERE run_id = $1', [failedId])).rows[0] as
            { timeline: unknown } | undefined,
      );
      await db.query('DELETE FROM run_archives WHERE run_id = $1', [failedId]);
      const fromHistory = await getRun(user, failedId);
      await db.query('INSERT INTO run_archives (run_id, temporal_run_id, timeline) VALUES ($1, $2, $3)', [
        failedId,
        failedBefore.temporal.runId,
        JSON.stringify(archive.timeline),
      ]);
      const last = fromHistory.timeline.length - 1;
      expect(fromHistory.timeline.slice(0, last)).toEqual(failedBefore.timeline.slice(0, last));
      expect({ ...fromHistory.timeline[last], at: undefined }).toEqual({
        ...failedBefore.timeline[last],
        at: undefined,
      });
      expect(
        Math.abs(Date.parse(fromHistory.timeline[last]!.at) - Date.parse(failedBefore.timeline[last]!.at)),
      ).toBeLessThan(5_000);

      await deleteFromTemporal(user, failedId);
      expect(await getRun(user, failedId)).toEqual(failedBefore);
      // A run without an archive (its queue could not write it), once Temporal deleted its history: its
      // row still tells how it was triggered and how it ended (no 500), and that the steps between are gone.
      await db.query('DELETE FROM run_archives WHERE run_id = $1', [failedId]);
      const fromRow = await getRun(user, failedId);
      expect(fromRow.timeline).toEqual([
        { at: failedBefore.queuedAt, type: 'triggered', triggeredBy: 'manual' },
        {
          at: failedBefore.startedAt,
          type: 'history_unavailable',
          message:
            "This run's timeline is no longer available: Temporal no longer keeps its history, and no copy of it was archived",
        },
        { at: failedBefore.endedAt, type: 'failed', code: 'MODEL_ERROR', error: failedBefore.error?.error },
      ]);

      // A model that never answers: the cancelled turn charges nothing, so the run's usage stays as it is.
      world.model.script({ stall: true });
      const cancelledId = await startRun(user, agentId);
      await waitForRun(world.http, user.token, cancelledId, ['active']);
      expect((await world.http.post(`/api/runs/${cancelledId}/cancel`, undefined, { token: user.token })).status).toBe(
        200,
      );
      await waitForRun(world.http, user.token, cancelledId, ['cancelled']);
      const cancelledBefore = await getRun(user, cancelledId);
      expect(cancelledBefore.timeline.map((e) => e.type)).toEqual(['triggered', 'cancelled']);
      await deleteFromTemporal(user, cancelledId);
      expect(await getRun(user, cancelledId)).toEqual(cancelledBefore);
    },
    2 * DELETION_TEST_TIMEOUT_MS,
  );

  it(
    'RUN_RETENTION_DAYS: a daily schedule deletes old runs with their data; fresh ones stay; unset, it is removed',
    async () => {
      const { user, agentId } = await userWithAgent();
      const oldId = await startRun(user, agentId);
      await waitForRun(world.http, user.token, oldId);
      const oldExecution = await executionOf(user, oldId);
      // The fresh run in an execution of its own: the old one's has closed (the queue continued as new).
      await eventually('the old run’s execution to close', async () =>
        (await temporal.workflow.getHandle(oldExecution.workflowId, oldExecution.runId).describe()).status.name !==
        'RUNNING'
          ? true
          : undefined,
      );
      const freshId = await startRun(user, agentId);
      await waitForRun(world.http, user.token, freshId);
      await db.query(`UPDATE runs SET created_at = now() - make_interval(days => $2) WHERE id = $1`, [
        oldId,
        RETENTION_DAYS + 1,
      ]);
      // Tool sets: the runs' one (the fresh run still names it), one no run names for two hours (as the
      // old run's would be once deleted, had the fresh run another set), and one just made that no run
      // names yet (a run starting as the clean-up runs): only the second goes.
      const setOf = async (runId: string): Promise<string> =>
        ((await db.query('SELECT tool_set_hash FROM runs WHERE id = $1', [runId])).rows[0] as { tool_set_hash: string })
          .tool_set_hash;
      const shared = await setOf(freshId);
      expect(await setOf(oldId)).toBe(shared);
      const orphan = (content: string): string => createHash('sha256').update(content).digest('hex');
      const [stale, recent] = [orphan('{"system":"stale","tools":[]}'), orphan('{"system":"recent","tools":[]}')];
      await db.query(
        "INSERT INTO run_tool_sets (hash, content, used_at) VALUES ($1, '{}', now() - interval '2 hours'), ($2, '{}', now())",
        [stale, recent],
      );
      await db.query("UPDATE run_tool_sets SET used_at = now() - interval '2 hours' WHERE hash = $1", [shared]);

      const taskQueue = world.stack.env.TEMPORAL_TASK_QUEUE!;
      const schedule = temporal.schedule.getHandle(`run-retention-${taskQueue}`);
      const described = await schedule.describe();
      expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'runRetentionWorkflow' });
      expect(described.action.type === 'startWorkflow' && described.action.taskQueue).toBe(taskQueue);
      expect(described.spec.calendars?.length ?? 0).toBeGreaterThan(0);

      await schedule.trigger();
      await eventually(
        'the old run to be deleted',
        async () => ((await db.query('SELECT 1 FROM runs WHERE id = $1', [oldId])).rowCount === 0 ? true : undefined),
        60_000,
      );
      expectError(await world.http.get(`/api/runs/${oldId}`, { token: user.token }), 'RUN_NOT_FOUND', 404);
      expect((await db.query('SELECT 1 FROM run_archives WHERE run_id = $1', [oldId])).rowCount).toBe(0);
      // The same batch deletes the sets no run names, after the runs.
      await eventually('the stale tool set to be deleted', async () =>
        (await db.query('SELECT 1 FROM run_tool_sets WHERE hash = $1', [stale])).rowCount === 0 ? true : undefined,
      );
      const kept = (await db.query('SELECT hash FROM run_tool_sets WHERE hash = ANY($1)', [[shared, stale, recent]]))
        .rows;
      expect(kept.map((r: { hash: string }) => r.hash).sort()).toEqual([shared, recent].sort());
      await executionGone(oldExecution);
      // The fresh run keeps everything.
      expect((await getRun(user, freshId)).status).toBe('completed');
      await eventually('the fresh run archived at its hand-over', async () =>
        (await db.query('SELECT 1 FROM run_archives WHERE run_id = $1', [freshId])).rowCount === 1 ? true : undefined,
      );
      const freshExecution = await executionOf(user, freshId);
      expect(freshExecution.runId).not.toBe(oldExecution.runId);
      await temporal.workflow.getHandle(freshExecution.workflowId, freshExecution.runId).describe();

      // A worker started without the setting removes the schedule.
      const unset = world.stack.spawn('worker-no-retention', 'src/worker.js', { RUN_RETENTION_DAYS: '' });
      try {
        await eventually(
          'the retention schedule to be removed',
          async () => {
            try {
              await schedule.describe();
              return undefined;
            } catch (err) {
              return err instanceof ScheduleNotFoundError ? true : undefined;
            }
          },
          60_000,
        );
      } finally {
        await stopChild(unset.child);
      }
    },
    DELETION_TEST_TIMEOUT_MS,
  );
});
