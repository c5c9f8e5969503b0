/**
 * An agent's scheduled trigger (workflows/scheduled-trigger.workflow.ts), what its Temporal Schedule
 * starts: it asks for the run in an activity (a local one when its schedule says so), then stays open
 * until the queue signals the run's end,
 * so the schedule's skip policy sees it running; a skipped firing ends at once, and one the queue
 * skipped drops its run's row. The shipped bundle in
 * a real Worker on a real dev server (harness.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';
import { workflowSource } from '../../src/temporal/worker-factory.js';
import { AGENT_HANDLERS, type ScheduledTriggerInput, type ScheduledTriggerResult } from '../../workflows/contracts.js';
import type { scheduledTriggerWorkflow } from '../../workflows/scheduled-trigger.workflow.js';
import { type HistoryEvent, uniqueId, until, useWorkflowEnvironment } from './harness.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const env = useWorkflowEnvironment();

type TriggerHandle = WorkflowHandle<typeof scheduledTriggerWorkflow>;

/** What the trigger's enqueueScheduledRun was asked, with the workflow that asked and whether it ran locally. */
interface Asked {
  input: ScheduledTriggerInput;
  workflowId: string;
  workflowType: string;
  local: boolean;
  attempt: number;
}

/**
 * A worker of the shipped bundle whose enqueueScheduledRun answers `answer` (which may throw), and a
 * way to fire the agent's trigger as its schedule does (the firing's time appended to the id).
 */
async function withTriggerWorker<T>(
  answer: (asked: Asked) => Promise<ScheduledTriggerResult>,
  body: (
    fire: (agentId: string, localRequest?: boolean) => Promise<TriggerHandle>,
    asked: Asked[],
    dropped: unknown[],
  ) => Promise<T>,
): Promise<T> {
  const asked: Asked[] = [];
  const dropped: unknown[] = [];
  const activities: Partial<Activities> = {
    dropSkippedScheduledRun: async (input) => {
      dropped.push({ ...input, local: Context.current().info.isLocal });
    },
    enqueueScheduledRun: async (input: ScheduledTriggerInput) => {
      const { info } = Context.current();
      const call = {
        input,
        workflowId: info.workflowExecution?.workflowId ?? '',
        workflowType: info.workflowType ?? '',
        local: info.isLocal,
        attempt: info.attempt,
      };
      asked.push(call);
      return answer(call);
    },
  };
  const taskQueue = uniqueId('wf-trigger');
  const worker = await Worker.create({
    connection: env().nativeConnection,
    namespace: env().namespace ?? 'default',
    taskQueue,
    activities,
    ...workflowSource(),
    reuseV8Context: true,
    debugMode: true,
  });
  const started: TriggerHandle[] = [];
  const fire = async (agentId: string, localRequest?: boolean): Promise<TriggerHandle> => {
    const handle = await env().client.workflow.start<typeof scheduledTriggerWorkflow>('scheduledTriggerWorkflow', {
      taskQueue,
      workflowId: `scheduled-${agentId}-2026-11-27T09:00:00Z`,
      args: [localRequest === undefined ? { agentId } : { agentId, localRequest }],
    });
    started.push(handle);
    return handle;
  };
  return worker.runUntil(async () => {
    try {
      return await body(fire, asked, dropped);
    } finally {
      for (const handle of started) {
        await handle.terminate('test over').catch(() => undefined);
      }
    }
  });
}

async function events(handle: TriggerHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/** The trigger's events (workflow tasks left out) are `expected`, and its history replays on the shipped bundle. */
async function expectEventsAndReplay(trigger: TriggerHandle, expected: string[]): Promise<void> {
  expect(kinds(await events(trigger))).toEqual(expected);
  await Worker.runReplayHistory({ ...workflowSource(), replayName: trigger.workflowId }, await trigger.fetchHistory());
}

const kinds = (list: HistoryEvent[]): string[] =>
  list.map((e) => EventType[e.eventType!]!.replace('EVENT_TYPE_', '')).filter((k) => !k.startsWith('WORKFLOW_TASK'));

describe('scheduledTriggerWorkflow', () => {
  it("asks for its run in an activity, then stays open until the queue signals the run's end", async () => {
    const agentId = uniqueId('agent');
    await withTriggerWorker(
      async () => ({ runId: 'run-1' }),
      async (fire, asked) => {
        const trigger = await fire(agentId);
        await until('the trigger to wait for its run', async () =>
          (await events(trigger)).some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
        );
        // The activity names the firing that asked (its id and type come from Temporal, which
        // enqueueScheduledRun checks against the agent's schedule).
        expect(asked).toEqual([
          {
            input: { agentId },
            workflowId: trigger.workflowId,
            workflowType: 'scheduledTriggerWorkflow',
            local: false,
            attempt: 1,
          },
        ]);
        // Open until the queue tells it the run ended: the schedule's skip policy sees it running.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await trigger.describe()).status.name).toBe('RUNNING');
        await trigger.signal(AGENT_HANDLERS.runEnded, 'run-1');
        await expect(trigger.result()).resolves.toEqual({ runId: 'run-1' });
        await expectEventsAndReplay(trigger, [
          'WORKFLOW_EXECUTION_STARTED',
          'ACTIVITY_TASK_SCHEDULED',
          'ACTIVITY_TASK_STARTED',
          'ACTIVITY_TASK_COMPLETED',
          'WORKFLOW_EXECUTION_SIGNALED',
          'WORKFLOW_EXECUTION_COMPLETED',
        ]);
      },
    );
  });

  it('ends at once when its firing is skipped (the agent busy, or gone)', async () => {
    await withTriggerWorker(
      async () => ({ skipped: 'the agent had a queued or active run' }),
      async (fire) => {
        const trigger = await fire(uniqueId('agent'));
        await expect(trigger.result()).resolves.toEqual({ skipped: 'the agent had a queued or active run' });
        expect(kinds(await events(trigger))).toEqual([
          'WORKFLOW_EXECUTION_STARTED',
          'ACTIVITY_TASK_SCHEDULED',
          'ACTIVITY_TASK_STARTED',
          'ACTIVITY_TASK_COMPLETED',
          'WORKFLOW_EXECUTION_COMPLETED',
        ]);
      },
    );
  });

  it("drops its run's row when the queue skips it, and ends skipped; another run's skip is not its own", async () => {
    const agentId = uniqueId('agent');
    await withTriggerWorker(
      async () => ({ runId: 'run-1' }),
      async (fire, _asked, dropped) => {
        const trigger = await fire(agentId);
        await until('the trigger to wait for its run', async () =>
          (await events(trigger)).some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
        );
        await trigger.signal(AGENT_HANDLERS.runSkipped, 'run-0');
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await trigger.describe()).status.name).toBe('RUNNING');
        expect(dropped).toEqual([]);
        await trigger.signal(AGENT_HANDLERS.runSkipped, 'run-1');
        await expect(trigger.result()).resolves.toEqual({ skipped: 'the agent had a queued or active run' });
        expect(dropped).toEqual([{ agentId, runId: 'run-1', local: false }]);
        await expectEventsAndReplay(trigger, [
          'WORKFLOW_EXECUTION_STARTED',
          'ACTIVITY_TASK_SCHEDULED',
          'ACTIVITY_TASK_STARTED',
          'ACTIVITY_TASK_COMPLETED',
          'WORKFLOW_EXECUTION_SIGNALED',
          'WORKFLOW_EXECUTION_SIGNALED',
          'ACTIVITY_TASK_SCHEDULED',
          'ACTIVITY_TASK_STARTED',
          'ACTIVITY_TASK_COMPLETED',
          'WORKFLOW_EXECUTION_COMPLETED',
        ]);
      },
    );
  });

  it('asks in a local activity in its first task when its schedule says so (localRequest), then waits the same way', async () => {
    const agentId = uniqueId('agent');
    await withTriggerWorker(
      async () => ({ runId: 'run-1' }),
      async (fire, asked, dropped) => {
        const trigger = await fire(agentId, true);
        await until('the trigger to wait for its run', async () =>
          (await events(trigger)).some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity'),
        );
        expect(asked).toEqual([
          {
            input: { agentId, localRequest: true },
            workflowId: trigger.workflowId,
            workflowType: 'scheduledTriggerWorkflow',
            local: true,
            attempt: 1,
          },
        ]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await trigger.describe()).status.name).toBe('RUNNING');
        // One workflow task before the wait: the request went in it.
        const tasks = (await events(trigger)).filter(
          (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        );
        expect(tasks).toHaveLength(1);
        await trigger.signal(AGENT_HANDLERS.runSkipped, 'run-1');
        await expect(trigger.result()).resolves.toEqual({ skipped: 'the agent had a queued or active run' });
        expect(dropped).toEqual([{ agentId, runId: 'run-1', local: true }]);
        await expectEventsAndReplay(trigger, [
          'WORKFLOW_EXECUTION_STARTED',
          'MARKER_RECORDED',
          'WORKFLOW_EXECUTION_SIGNALED',
          'MARKER_RECORDED',
          'WORKFLOW_EXECUTION_COMPLETED',
        ]);
      },
    );
  });

  it('asks again locally when the request fails, and a skipped firing ends in its first task', async () => {
    await withTriggerWorker(
      async (asked) => {
        if (asked.attempt < 2) {
          throw new Error('connection refused');
        }
        return { skipped: 'no credits' };
      },
      async (fire, asked) => {
        const trigger = await fire(uniqueId('agent'), true);
        await expect(trigger.result()).resolves.toEqual({ skipped: 'no credits' });
        expect(asked.map((a) => [a.attempt, a.local])).toEqual([
          [1, true],
          [2, true],
        ]);
        expect(kinds(await events(trigger))).toEqual([
          'WORKFLOW_EXECUTION_STARTED',
          'MARKER_RECORDED',
          'WORKFLOW_EXECUTION_COMPLETED',
        ]);
      },
    );
  });

  it('asks again when the request fails (the database restarting)', async () => {
    await withTriggerWorker(
      async (asked) => {
        if (asked.attempt < 3) {
          throw new Error('connection refused');
        }
        return { skipped: 'no credits' };
      },
      async (fire, asked) => {
        const trigger = await fire(uniqueId('agent'));
        await expect(trigger.result()).resolves.toEqual({ skipped: 'no credits' });
        expect(asked.map((a) => a.attempt)).toEqual([1, 2, 3]);
      },
    );
  });
});
