import {
  ApplicationFailure,
  defineQuery,
  defineSignal,
  defineUpdate,
  getExternalWorkflowHandle,
  setHandler,
} from '@temporalio/workflow';
import { AGENT_HANDLERS, type AgentQueueState, type EnqueueResult, FAILURE, type RunRequest } from './contracts.js';

export const enqueueRunUpdate = defineUpdate<EnqueueResult, [RunRequest]>(AGENT_HANDLERS.enqueueRun);
export const enqueueRunSignal = defineSignal<[RunRequest]>(AGENT_HANDLERS.enqueueRunSignal);
export const cancelQueuedRunUpdate = defineUpdate<boolean, [string]>(AGENT_HANDLERS.cancelQueuedRun);
export const agentStateQuery = defineQuery<AgentQueueState>(AGENT_HANDLERS.agentState);
export const runEndedSignal = defineSignal<[string]>(AGENT_HANDLERS.runEnded);
export const runSkippedSignal = defineSignal<[string]>(AGENT_HANDLERS.runSkipped);

/** Delivery ids remembered for de-duplication (carried over continue-as-new). */
const MAX_REMEMBERED_DELIVERIES = 1000;
/** Scheduled runs skipped, remembered by one execution (a firing's retried request comes within seconds). */
const MAX_REMEMBERED_SKIPS = 100;

/** An agent's run queue inside one workflow execution: the requests waiting, and the one running. */
export interface RunQueue {
  readonly queue: RunRequest[];
  active: RunRequest | undefined;
  /** Takes a queued request out (and tells whoever waits for it); false if it is not queued. */
  dequeue(runId: string): boolean;
  /** The delivery ids remembered, for the next execution. */
  deliveries(): Array<[string, string]>;
}

/**
 * The handlers of the agent's queue (agent-queue.workflow.ts). Manual requests arrive as Updates
 * (update-with-start; a validator refuses them while the agent is busy), webhooks and schedules'
 * firings as signals (signal-with-start); either way a request is durable in the history before the
 * API (or the firing's activity) answers. A firing's request that finds the agent busy is skipped,
 * and the firing told (runSkipped).
 */
export function runQueue(
  agentId: string,
  queued: RunRequest[] | undefined,
  remembered: Array<[string, string]> | undefined,
): RunQueue {
  const queue: RunRequest[] = queued ?? [];
  const deliveries = new Map<string, string>(remembered ?? []);
  const state: RunQueue = {
    queue,
    active: undefined,
    dequeue: (runId: string): boolean => {
      const index = queue.findIndex((r) => r.runId === runId);
      if (index < 0) {
        return false;
      }
      const [removed] = queue.splice(index, 1);
      if (removed?.notifyWorkflowId !== undefined) {
        void notifyRunEnded(removed);
      }
      return true;
    },
    deliveries: () => [...deliveries],
  };

  const busy = (): boolean => state.active !== undefined || queue.length > 0;

  /** Adds a request to the queue, once per delivery id and once per run id. */
  const enqueue = (request: RunRequest): EnqueueResult => {
    const active = state.active;
    if (queue.some((r) => r.runId === request.runId) || active?.runId === request.runId) {
      return { runId: request.runId, queuePosition: 0, duplicate: true };
    }
    if (request.deliveryId !== null) {
      const first = deliveries.get(request.deliveryId);
      if (first !== undefined) {
        const position = queue.findIndex((r) => r.runId === first);
        return { runId: first, queuePosition: position < 0 ? 0 : position + (active ? 1 : 0), duplicate: true };
      }
      deliveries.set(request.deliveryId, request.runId);
      if (deliveries.size > MAX_REMEMBERED_DELIVERIES) {
        deliveries.delete(deliveries.keys().next().value!);
      }
    }
    queue.push(request);
    return { runId: request.runId, queuePosition: queue.length - 1 + (active ? 1 : 0), duplicate: false };
  };

  // The scheduled runs this execution skipped: a firing's request sent again (its activity retried) is
  // skipped again, not run once the agent is idle, since the firing has dropped the run by then.
  const skipped = new Set<string>();

  setHandler(enqueueRunSignal, (request: RunRequest): void => {
    if (request.agentId !== agentId) {
      return;
    }
    if (request.mode === 'queue') {
      enqueue(request);
      return;
    }
    if (request.mode !== 'skip_if_busy' || request.notifyWorkflowId === undefined) {
      return;
    }
    const held = queue.some((r) => r.runId === request.runId) || state.active?.runId === request.runId;
    if (held) {
      return;
    }
    if (skipped.has(request.runId) || busy()) {
      skipped.add(request.runId);
      if (skipped.size > MAX_REMEMBERED_SKIPS) {
        skipped.delete(skipped.values().next().value!);
      }
      void notifyRunSkipped(request);
      return;
    }
    enqueue(request);
  });

  setHandler(enqueueRunUpdate, enqueue, {
    // Validators run before anything is written to history: a refused request leaves no trace.
    validator: (request: RunRequest): void => {
      if (request.agentId !== agentId) {
        throw ApplicationFailure.nonRetryable('request for another agent', FAILURE.agentNotFound);
      }
      if (request.deliveryId !== null && deliveries.has(request.deliveryId)) {
        return;
      }
      if (request.mode === 'reject_if_busy' && busy()) {
        throw ApplicationFailure.nonRetryable(
          'The agent already has a queued or active run',
          FAILURE.agentAlreadyRunning,
        );
      }
      if (request.mode === 'skip_if_busy' && busy()) {
        throw ApplicationFailure.nonRetryable('Skipped: the agent has a queued or active run', FAILURE.runSkipped);
      }
    },
  });

  setHandler(cancelQueuedRunUpdate, (runId: string): boolean => state.dequeue(runId));

  setHandler(agentStateQuery, (): AgentQueueState => ({
    activeRunId: state.active?.runId ?? null,
    queuedRunIds: queue.map((r) => r.runId),
  }));

  return state;
}

/** Tells a schedule's firing that the queue skipped its run (the agent had one queued or active). */
async function notifyRunSkipped(request: RunRequest): Promise<void> {
  try {
    await getExternalWorkflowHandle(request.notifyWorkflowId!).signal(runSkippedSignal, request.runId);
  } catch {
    // The firing is gone (terminated or timed out): nothing to tell.
  }
}

/** Tells the trigger that waits for a run (a schedule's firing) that it has ended. */
export async function notifyRunEnded(request: RunRequest): Promise<void> {
  if (request.notifyWorkflowId === undefined) {
    return;
  }
  try {
    await getExternalWorkflowHandle(request.notifyWorkflowId).signal(runEndedSignal, request.runId);
  } catch {
    // The waiting trigger is gone (terminated or timed out): nothing to tell.
  }
}
