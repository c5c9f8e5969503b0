/**
 * The agent's queue (workflows/agent-queue.workflow.ts with run-queue.ts): the shipped workflow
 * bundle in a real Worker on a real Temporal dev server, its activities mocked (test/workflows/
 * harness.ts says why the time-skipping server is not used). Runs go one at a time in arrival order;
 * a queued run is taken out and an active one cancelled; an execution hands over (continues as new,
 * with the rest of the queue) after its run limit or its `executionSeconds`, archiving the runs it ran
 * in one step just before.
 */
import { describe, expect, it } from '@jest/globals';
import {
  AGENT_HANDLERS,
  type FinishRunInput,
  MAX_RUNS_PER_EXECUTION,
  type ModelTurnInput,
} from '../../workflows/contracts.js';
import {
  type ActivityCall,
  agentIdOf,
  type ArchivedRun,
  cancelRun,
  continuedAsNewWith,
  enqueue,
  expectReplays,
  gate,
  historyOf,
  mockActivities,
  nonRetryable,
  queueState,
  rateLimited,
  runIdsUpserts,
  runRequest,
  runsCalled,
  runSteps,
  sequence,
  textAnswer,
  timersOf,
  toolUseAnswer,
  until,
  untilRunsEnded,
  useWorkflowEnvironment,
  withQueueWorker,
} from './harness.js';

const env = useWorkflowEnvironment();

describe('agentQueueWorkflow: order and one run at a time', () => {
  it('runs queued runs in arrival order, lists them in one upsert, archives them together after the hand-over', async () => {
    const first = gate();
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput) => {
        if (input.runId.endsWith('-1')) {
          await first.opened;
        }
        return textAnswer(`done ${input.runId}`);
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      // Long enough for the test to queue the runs behind run 1 before the execution is old.
      const handle = await start({ executionSeconds: 6 });
      const firstExecution = (await handle.describe()).runId;
      const agentId = agentIdOf(handle);
      const ids = [1, 2, 3, 4].map((n) => `${agentId}-run-${n}`);
      const positions = [];
      for (const runId of ids) {
        positions.push((await enqueue(handle, runRequest(agentId, runId))).queuePosition);
        if (positions.length === 1) {
          await until('run 1 in its first turn', () => mock.calls.length > 0);
        }
      }
      expect(positions).toEqual([0, 1, 2, 3]);
      expect(await queueState(handle)).toEqual({ activeRunId: ids[0], queuedRunIds: ids.slice(1) });

      first.open();
      await untilRunsEnded(handle, mock.calls, ids);
      // Ended, not archived yet: their timelines are read from the open execution's history meanwhile.
      expect(runsCalled(mock.calls, 'archiveRun')).toEqual([]);
      await until('4 runs archived', () => runsCalled(mock.calls, 'archiveRun').length === 4, 20_000);
      // One archive step, after the last run, by the next execution, naming the one that ran them.
      expect(sequence(mock.calls)).toEqual([
        ...ids.map((id) => `modelTurn:${id}`),
        ...ids.map((id) => `archiveRun:${id}`),
      ]);
      const archives = mock.calls.filter((c) => c.name === 'archiveRun');
      const [secondExecution] = new Set(archives.map((c) => c.execution));
      expect(new Set(archives.map((c) => c.execution)).size).toBe(1);
      expect(secondExecution).not.toBe(firstExecution);
      expect(archives.map((c) => (c.input as ArchivedRun).executionRunId)).toEqual(ids.map(() => firstExecution));
      // Each run ended by its last turn (its row says completed): the workflow's own finishRun is not needed.
      const archived = archives.map((c) => c.input as ArchivedRun);
      expect(archived.map((a) => [a.runId, a.status, a.agentId])).toEqual(ids.map((id) => [id, 'completed', agentId]));
      // Where each run begins in the execution's history: the archive reads it once, from the first.
      const from = archived.map((a) => a.fromEventId);
      expect(from.every((id, i) => i === 0 || id > from[i - 1]!)).toBe(true);
      // The hand-over carried the runs to archive: no local activity held its workflow task.
      const history = await historyOf(handle, firstExecution);
      expect(continuedAsNewWith(history)).toMatchObject({
        agentId,
        queue: [],
        archive: {
          agentId,
          executionRunId: firstExecution,
          runs: ids.map((runId) => ({ runId, status: 'completed' })),
        },
      });
      expect(history.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(false);
      // Run 1 arrived at an idle queue: listed alone. Run 2 lists the runs queued behind it: no more upserts.
      expect(runIdsUpserts(history)).toEqual([ids.slice(0, 1), ids]);
      await expectReplays(handle, firstExecution);
    });
  });

  it('starts no run while one is active, whatever arrives meanwhile', async () => {
    let inFlight = 0;
    let mostInFlight = 0;
    const first = gate();
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput, turn: number) => {
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        try {
          if (input.runId.endsWith('-a') && turn === 1) {
            await first.opened;
          }
          return turn === 1 ? toolUseAnswer(`use-${input.runId}`) : textAnswer('done');
        } finally {
          inFlight -= 1;
        }
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start();
      const agentId = agentIdOf(handle);
      await enqueue(handle, runRequest(agentId, `${agentId}-a`));
      await until('run a in its first turn', () => mock.calls.length === 1);
      // A webhook's signal and a manual run's update arrive while run a is active.
      await handle.signal(AGENT_HANDLERS.enqueueRunSignal, runRequest(agentId, `${agentId}-b`));
      const refused = enqueue(handle, runRequest(agentId, `${agentId}-c`, { mode: 'reject_if_busy' }));
      await expect(refused).rejects.toThrow();
      await until('run b queued', async () => (await queueState(handle)).queuedRunIds.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(runsCalled(mock.calls, 'modelTurn')).toEqual([`${agentId}-a`]);

      first.open();
      const a = `${agentId}-a`;
      const b = `${agentId}-b`;
      await untilRunsEnded(handle, mock.calls, [a, b]);
      expect(mostInFlight).toBe(1);
      expect(sequence(mock.calls)).toEqual([
        `modelTurn:${a}`,
        `callTool:${a}`,
        `modelTurn:${a}`,
        `modelTurn:${b}`,
        `callTool:${b}`,
        `modelTurn:${b}`,
      ]);
      expect(runsCalled(mock.calls, 'modelTurn')).not.toContain(`${agentId}-c`);
    });
  });

  it("skips a schedule's firing that finds the agent busy and tells the firing; the same run sent again stays skipped", async () => {
    const first = gate();
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput) => {
        if (input.runId.endsWith('-a')) {
          await first.opened;
        }
        return textAnswer('done');
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start();
      const agentId = agentIdOf(handle);
      const [a, fired, later] = [`${agentId}-a`, `${agentId}-fired`, `${agentId}-later`];
      const firing = (runId: string) =>
        runRequest(agentId, runId, {
          triggeredBy: 'schedule',
          mode: 'skip_if_busy',
          notifyWorkflowId: `scheduled-${agentId}-${runId}`,
        });
      const skipsSent = async (): Promise<Array<[string, unknown]>> =>
        (await historyOf(handle))
          .map((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)
          .filter((x) => x?.signalName === AGENT_HANDLERS.runSkipped)
          .map((x) => [
            x!.workflowExecution!.workflowId!,
            JSON.parse(Buffer.from(x!.input!.payloads![0]!.data!).toString()),
          ]);
      await enqueue(handle, runRequest(agentId, a));
      await until('run a in its first turn', () => mock.calls.length === 1);
      await handle.signal(AGENT_HANDLERS.enqueueRunSignal, firing(fired));
      await until('the firing told', async () => (await skipsSent()).length === 1);
      expect(await skipsSent()).toEqual([[`scheduled-${agentId}-${fired}`, fired]]);
      expect(await queueState(handle)).toEqual({ activeRunId: a, queuedRunIds: [] });

      first.open();
      await untilRunsEnded(handle, mock.calls, [a]);
      // Idle now: the skipped run sent again (its firing's activity retried) is skipped again; a new firing runs.
      await handle.signal(AGENT_HANDLERS.enqueueRunSignal, firing(fired));
      await handle.signal(AGENT_HANDLERS.enqueueRunSignal, firing(later));
      await handle.signal(AGENT_HANDLERS.enqueueRunSignal, firing(later));
      await untilRunsEnded(handle, mock.calls, [a, later]);
      expect((await skipsSent()).map(([, runId]) => runId)).toEqual([fired, fired]);
      expect(runsCalled(mock.calls, 'modelTurn')).toEqual([a, later]);
      // The new firing's request sent twice is one run.
      await expectReplays(handle);
    });
  });

  it('hands over and goes on when the archive is refused (left to the run reconciler)', async () => {
    const mock = mockActivities({
      archiveRun: (input: ArchivedRun) => {
        if (input.runId.endsWith('-1')) {
          throw nonRetryable('Only the workflow that ran a run may archive it', 'PERMISSION_DENIED');
        }
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: 1 });
      const firstExecution = (await handle.describe()).runId;
      const id = agentIdOf(handle);
      await enqueue(handle, runRequest(id, `${id}-1`));
      await enqueue(handle, runRequest(id, `${id}-2`));
      await until(
        'the hand-over',
        async () => continuedAsNewWith(await historyOf(handle, firstExecution)) !== undefined,
      );
      await until('the archive asked', () => runsCalled(mock.calls, 'archiveRun').includes(`${id}-1`));
      // Refused once (not retried), and the queue went on all the same.
      expect(runsCalled(mock.calls, 'archiveRun').filter((runId) => runId === `${id}-1`)).toHaveLength(1);
      await enqueue(handle, runRequest(id, `${id}-3`));
      await untilRunsEnded(handle, mock.calls, [`${id}-3`]);
      expect(runSteps(mock.calls)).toEqual([`modelTurn:${id}-1`, `modelTurn:${id}-2`, `modelTurn:${id}-3`]);
      await expectReplays(handle, firstExecution);
    });
  });
});

describe('agentQueueWorkflow: cancellation', () => {
  it('takes a queued run out of the queue: it never starts, and the others keep their order', async () => {
    const first = gate();
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput) => {
        if (input.runId.endsWith('-1')) {
          await first.opened;
        }
        return textAnswer('done');
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start();
      const agentId = agentIdOf(handle);
      const [r1, r2, r3, r4] = [1, 2, 3, 4].map((n) => `${agentId}-${n}`) as [string, string, string, string];
      await enqueue(handle, runRequest(agentId, r1));
      await until('run 1 in its first turn', () => mock.calls.length === 1);
      await enqueue(handle, runRequest(agentId, r2));
      await enqueue(handle, runRequest(agentId, r3));
      await enqueue(handle, runRequest(agentId, r4));

      expect(await cancelRun(handle, r2)).toBe('dequeued');
      expect(await handle.executeUpdate<boolean, [string]>(AGENT_HANDLERS.cancelQueuedRun, { args: [r4] })).toBe(true);
      expect(await cancelRun(handle, r2)).toBe('unknown');
      expect(await queueState(handle)).toEqual({ activeRunId: r1, queuedRunIds: [r3] });

      first.open();
      await untilRunsEnded(handle, mock.calls, [r1, r3]);
      expect(sequence(mock.calls)).toEqual([`modelTurn:${r1}`, `modelTurn:${r3}`]);
      expect(mock.calls.some((c) => c.runId === r2 || c.runId === r4)).toBe(false);
    });
  });

  it('cancels the active run during its Retry-After wait: the run ends cancelled, is archived, and the next runs', async () => {
    const mock = mockActivities({
      modelTurn: (input: ModelTurnInput, turn: number) =>
        input.runId.endsWith('-1') && turn === 1 ? toolUseAnswer('wait') : textAnswer('done'),
      // 300 s: the cap itself, so the run waits (a longer one would not; see agent-run.workflow-spec).
      callTool: () => {
        throw rateLimited(300);
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: 2 });
      const firstExecution = (await handle.describe()).runId;
      const agentId = agentIdOf(handle);
      const [r1, r2] = [`${agentId}-1`, `${agentId}-2`];
      await enqueue(handle, runRequest(agentId, r1));
      await enqueue(handle, runRequest(agentId, r2));
      await until('the rate-limit timer', async () => timersOf(await historyOf(handle)).some((t) => t.seconds === 300));
      expect(timersOf(await historyOf(handle))).toContainEqual({ seconds: 300, summary: 'rate_limit' });

      const started = Date.now();
      expect(await cancelRun(handle, r1)).toBe('cancelled');
      // Answered once the run has recorded its end, not after the 300 s.
      expect(Date.now() - started).toBeLessThan(30_000);
      const finish = mock.calls.find((c) => c.name === 'finishRun' && c.runId === r1)?.input as FinishRunInput;
      expect(finish).toMatchObject({ runId: r1, status: 'cancelled' });

      await until('run 2 archived', () => runsCalled(mock.calls, 'archiveRun').includes(r2));
      expect(runSteps(mock.calls)).toEqual([`modelTurn:${r1}`, `callTool:${r1}`, `finishRun:${r1}`, `modelTurn:${r2}`]);
      // A cancelled run is archived as any other, at its execution's hand-over.
      const archived = mock.calls.filter((c) => c.name === 'archiveRun').map((c) => (c.input as ArchivedRun).status);
      expect(archived).toEqual(['cancelled', 'completed']);
      const events = await historyOf(handle, firstExecution);
      expect(events.some((e) => e.timerCanceledEventAttributes)).toBe(true);
      expect(timersOf(events).filter((t) => t.seconds === 300)).toHaveLength(1);
      await expectReplays(handle, firstExecution);
    });
  });

  it('cancels the active run during a model turn without waiting for the turn to answer', async () => {
    const never = gate();
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput) => {
        if (input.runId.endsWith('-1')) {
          await never.opened; // a turn that does not answer (the worker's shutdown ends it)
        }
        return textAnswer('done');
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start();
      const agentId = agentIdOf(handle);
      const [r1, r2] = [`${agentId}-1`, `${agentId}-2`];
      await enqueue(handle, runRequest(agentId, r1));
      await enqueue(handle, runRequest(agentId, r2));
      await until('run 1 in its first turn', () => mock.calls.length === 1);

      expect(await cancelRun(handle, r1)).toBe('cancelled');
      await untilRunsEnded(handle, mock.calls, [r1, r2]);
      expect(sequence(mock.calls)).toEqual([`modelTurn:${r1}`, `finishRun:${r1}`, `modelTurn:${r2}`]);
      expect(mock.calls.find((c) => c.name === 'finishRun')?.input).toMatchObject({ runId: r1, status: 'cancelled' });
      const events = await historyOf(handle);
      expect(events.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
    });
  });
});

describe('agentQueueWorkflow: continue-as-new', () => {
  it(`hands over after ${MAX_RUNS_PER_EXECUTION} runs, carrying the rest of the queue in order`, async () => {
    const first = gate();
    const total = MAX_RUNS_PER_EXECUTION + 3;
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput) => {
        if (input.runId.endsWith('-01')) {
          await first.opened;
        }
        return textAnswer('done');
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start();
      const agentId = agentIdOf(handle);
      const ids = Array.from({ length: total }, (_, i) => `${agentId}-${String(i + 1).padStart(2, '0')}`);
      for (const [i, runId] of ids.entries()) {
        await enqueue(handle, runRequest(agentId, runId, { deliveryId: `delivery-${i + 1}` }));
      }
      const firstExecution = (await handle.describe()).runId;
      first.open();
      await untilRunsEnded(handle, mock.calls, ids);

      expect(runsCalled(mock.calls, 'modelTurn')).toEqual(ids);
      // The first execution's runs archived in one step, after its last run, by the next execution.
      await until(
        `${MAX_RUNS_PER_EXECUTION} runs archived`,
        () => runsCalled(mock.calls, 'archiveRun').length === MAX_RUNS_PER_EXECUTION,
      );
      const archives = mock.calls.filter((c) => c.name === 'archiveRun');
      expect(archives.map((c) => c.runId)).toEqual(ids.slice(0, MAX_RUNS_PER_EXECUTION));
      expect(new Set(archives.map((c) => (c.input as ArchivedRun).executionRunId))).toEqual(new Set([firstExecution]));
      expect(archives.every((c) => c.execution !== firstExecution)).toBe(true);
      expect(mock.calls.indexOf(archives[0]!)).toBeGreaterThan(
        mock.calls.findIndex((c) => c.runId === ids[MAX_RUNS_PER_EXECUTION - 1]),
      );
      // However many runs queue up, they cost at most two upserts: run 1's, and run 2's listing those
      // this execution runs (a whole queue of 50 or more went over the attribute's 2 KB).
      const upserts = runIdsUpserts(await historyOf(handle, firstExecution));
      expect(upserts.length).toBeLessThanOrEqual(2);
      expect(upserts.at(-1)).toEqual(ids.slice(0, MAX_RUNS_PER_EXECUTION));
      const executions = [...new Set(mock.calls.map((c) => c.execution))];
      expect(executions).toHaveLength(2);
      expect(executions[0]).toBe(firstExecution);
      const byExecution = (execution: string | undefined): string[] =>
        mock.calls.filter((c) => c.name === 'modelTurn' && c.execution === execution).map((c) => c.runId);
      expect(byExecution(executions[0])).toEqual(ids.slice(0, MAX_RUNS_PER_EXECUTION));
      expect(byExecution(executions[1])).toEqual(ids.slice(MAX_RUNS_PER_EXECUTION));

      const handedOver = continuedAsNewWith(await historyOf(handle, firstExecution));
      expect(handedOver?.agentId).toBe(agentId);
      expect(handedOver?.queue?.map((r) => r.runId)).toEqual(ids.slice(MAX_RUNS_PER_EXECUTION));
      // The de-duplication of deliveries goes on in the next execution.
      expect(handedOver?.deliveries).toHaveLength(total);
      const again = await enqueue(handle, runRequest(agentId, `${agentId}-again`, { deliveryId: 'delivery-1' }));
      expect(again).toMatchObject({ runId: ids[0], duplicate: true });
      const described = await handle.describe();
      expect(described.runId).toBe(executions[1]);
      expect(described.typedSearchAttributes.getAll().map((p) => p.key.name)).toContain('AgentId');
      await expectReplays(handle, firstExecution);
    });
  }, 60_000);

  it('runs what arrives after the hand-over while the runs before it are archived', async () => {
    const archiving = gate();
    const mock = mockActivities({ archiveRun: () => archiving.opened });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: 1 });
      const agentId = agentIdOf(handle);
      const [r1, r2] = [`${agentId}-1`, `${agentId}-2`];
      const firstExecution = (await handle.describe()).runId;
      await enqueue(handle, runRequest(agentId, r1));
      await until(
        'the hand-over',
        async () => continuedAsNewWith(await historyOf(handle, firstExecution)) !== undefined,
      );
      await until('run 1 being archived', () => runsCalled(mock.calls, 'archiveRun').includes(r1));
      // Run 2 arrives while the next execution's archive of run 1 is in flight, and ends all the same.
      await enqueue(handle, runRequest(agentId, r2));
      await untilRunsEnded(handle, mock.calls, [r2]);
      expect(runsCalled(mock.calls, 'archiveRun')).toEqual([r1]);
      archiving.open();
      await expectReplays(handle, firstExecution);
    });
  });

  it('archives at its own hand-over an execution started without archiveAfterHandover, and hands over with it', async () => {
    const mock = mockActivities();
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: 1, archiveAfterHandover: false });
      const agentId = agentIdOf(handle);
      const firstExecution = (await handle.describe()).runId;
      await enqueue(handle, runRequest(agentId, `${agentId}-1`));
      await until(
        'the hand-over',
        async () => continuedAsNewWith(await historyOf(handle, firstExecution)) !== undefined,
      );
      const archived = mock.calls.filter((c) => c.name === 'archiveRun');
      expect(archived.map((c) => [c.runId, c.execution])).toEqual([[`${agentId}-1`, firstExecution]]);
      expect(archived[0]?.input).not.toHaveProperty('executionRunId');
      const handedOver = continuedAsNewWith(await historyOf(handle, firstExecution));
      expect(handedOver).toMatchObject({ archiveAfterHandover: true });
      expect(handedOver).not.toHaveProperty('archive');
      await expectReplays(handle, firstExecution);
    });
  });

  it('hands over once the run in progress ends after executionSeconds, with the queue', async () => {
    const first = gate();
    const mock = mockActivities({
      modelTurn: async (input: ModelTurnInput) => {
        if (input.runId.endsWith('-1')) {
          await first.opened;
        }
        return textAnswer('done');
      },
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: 1 });
      const agentId = agentIdOf(handle);
      const [r1, r2] = [`${agentId}-1`, `${agentId}-2`];
      const firstExecution = (await handle.describe()).runId;
      await enqueue(handle, runRequest(agentId, r1));
      await enqueue(handle, runRequest(agentId, r2));
      await until('the execution timer fired', async () =>
        (await historyOf(handle, firstExecution)).some((e) => e.timerFiredEventAttributes),
      );
      // Old, but run 1 is still going: no hand-over in the middle of a run.
      expect(continuedAsNewWith(await historyOf(handle, firstExecution))).toBeUndefined();
      expect(timersOf(await historyOf(handle, firstExecution))).toEqual([{ seconds: 1, summary: undefined }]);

      first.open();
      await until('run 2 archived', () => runsCalled(mock.calls, 'archiveRun').includes(r2));
      // The runs an execution ran are archived by the next one, which names the execution that ran them.
      const archive = (runId: string): ActivityCall | undefined =>
        mock.calls.find((c) => c.name === 'archiveRun' && c.runId === runId);
      const secondExecution = mock.calls.find((c) => c.name === 'modelTurn' && c.runId === r2)?.execution;
      expect(archive(r1)).toMatchObject({ execution: secondExecution, input: { executionRunId: firstExecution } });
      expect(archive(r2)?.execution).not.toBe(secondExecution);
      expect(archive(r2)?.input).toMatchObject({ executionRunId: secondExecution });
      const handedOver = continuedAsNewWith(await historyOf(handle, firstExecution));
      expect(handedOver).toMatchObject({ agentId, executionSeconds: 1 });
      expect(handedOver?.queue?.map((r) => r.runId)).toEqual([r2]);
      const ran = (execution: string): string[] =>
        mock.calls.filter((c) => c.name === 'modelTurn' && c.execution === execution).map((c) => c.runId);
      expect(ran(firstExecution)).toEqual([r1]);
      expect(mock.calls.find((c) => c.runId === r2)?.execution).not.toBe(firstExecution);
    });
  });

  it(`takes ${600} s when executionSeconds is missing or not a positive whole number`, async () => {
    const mock = mockActivities();
    await withQueueWorker(env(), mock.activities, async (start) => {
      for (const executionSeconds of [undefined, 0, -5, 1.5]) {
        const handle = await start(executionSeconds === undefined ? {} : { executionSeconds });
        const agentId = agentIdOf(handle);
        await enqueue(handle, runRequest(agentId, `${agentId}-1`));
        await untilRunsEnded(handle, mock.calls, [`${agentId}-1`]);
        expect(timersOf(await historyOf(handle))).toEqual([{ seconds: 600, summary: undefined }]);
      }
    });
  });

  it('an execution that ran nothing waits for a request, however old', async () => {
    const mock = mockActivities();
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const events = await historyOf(handle);
      expect(timersOf(events)).toEqual([]);
      expect(continuedAsNewWith(events)).toBeUndefined();
      expect((await handle.describe()).status.name).toBe('RUNNING');
    });
  });
});
