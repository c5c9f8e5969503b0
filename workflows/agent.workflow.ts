import {
  ApplicationFailure,
  ChildWorkflowCancellationType,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  getExternalWorkflowHandle,
  allHandlersFinished,
  ParentClosePolicy,
  patched,
  setHandler,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import {
  AGENT_HANDLERS,
  type AgentQueueState,
  type EnqueueResult,
  FAILURE,
  type RunRequest,
  SEARCH_ATTRIBUTES,
  workflowIds,
} from './contracts.js';
import { agentRunWorkflow } from './agent-run.workflow.js';

export const enqueueRunUpdate = defineUpdate<EnqueueResult, [RunRequest]>(AGENT_HANDLERS.enqueueRun);
export const enqueueRunSignal = defineSignal<[RunRequest]>(AGENT_HANDLERS.enqueueRunSignal);
export const cancelQueuedRunUpdate = defineUpdate<boolean, [string]>(AGENT_HANDLERS.cancelQueuedRun);
export const agentStateQuery = defineQuery<AgentQueueState>(AGENT_HANDLERS.agentState);
export const runEndedSignal = defineSignal<[string]>(AGENT_HANDLERS.runEnded);

/** Delivery ids remembered for de-duplication (carried over continue-as-new). */
const MAX_REMEMBERED_DELIVERIES = 1000;

export interface AgentWorkflowInput {
  agentId: string;
  queue?: RunRequest[];
  deliveries?: Array<[string, string]>;
}

/**
 * One per agent (`agent-<agentId>`): the agent's run queue. Manual and scheduled requests arrive
 * as Updates (update-with-start; a validator refuses them while the agent is busy), webhooks as
 * signals (signal-with-start); either way a request is durable in this history before the API answers.
 * Runs execute one at a time, in arrival order, each as a child workflow `run-<runId>`.
 */
export async function agentWorkflow(input: AgentWorkflowInput): Promise<void> {
  // Asked once, in the first workflow task: executions that began under this code let every handler
  // finish before a run starts (below); those that began before keep the order their history has.
  const handlersBeforeRun = patched('handlers-before-run');
  const queue: RunRequest[] = input.queue ?? [];
  const deliveries = new Map<string, string>(input.deliveries ?? []);
  let active: RunRequest | undefined;

  const busy = (): boolean => active !== undefined || queue.length > 0;

  /** Adds a request to the queue, once per delivery id and once per run id. */
  const enqueue = (request: RunRequest): EnqueueResult => {
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

  setHandler(enqueueRunSignal, (request: RunRequest): void => {
    if (request.agentId === input.agentId && request.mode === 'queue') {
      enqueue(request);
    }
  });

  setHandler(enqueueRunUpdate, enqueue, {
    // Validators run before anything is written to history: a refused request leaves no trace.
    validator: (request: RunRequest): void => {
      if (request.agentId !== input.agentId) {
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

  setHandler(cancelQueuedRunUpdate, (runId: string): boolean => {
    const index = queue.findIndex((r) => r.runId === runId);
    if (index < 0) {
      return false;
    }
    const [removed] = queue.splice(index, 1);
    if (removed?.notifyWorkflowId !== undefined) {
      void notify(removed);
    }
    return true;
  });

  setHandler(agentStateQuery, (): AgentQueueState => ({
    activeRunId: active?.runId ?? null,
    queuedRunIds: queue.map((r) => r.runId),
  }));

  for (;;) {
    await condition(() => queue.length > 0 || workflowInfo().continueAsNewSuggested);
    if (queue.length === 0 || workflowInfo().continueAsNewSuggested) {
      // Keep the history short: hand the queue to a fresh run of this workflow once handlers are done.
      await condition(allHandlersFinished);
      await continueAsNew<typeof agentWorkflow>({ agentId: input.agentId, queue, deliveries: [...deliveries] });
    }
    if (handlersBeforeRun) {
      // The enqueue Update's completion is written before the run's start, whatever the interceptors:
      // the traced bundle's Update interceptor answers a few yields later than the plain one, and
      // without this wait the two bundles order these commands differently and cannot replay each
      // other's histories (turning tracing on or off, or a mix of workers).
      await condition(allHandlersFinished);
      if (queue.length === 0) {
        continue;
      }
    }
    active = queue.shift()!;
    try {
      await executeChild(agentRunWorkflow, {
        workflowId: workflowIds.run(active.runId),
        args: [active],
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.agentId, value: active.agentId },
          { key: SEARCH_ATTRIBUTES.userId, value: active.userId },
          { key: SEARCH_ATTRIBUTES.triggeredBy, value: active.triggeredBy },
        ],
        memo: { agentName: active.agentName, runId: active.runId },
        staticSummary: `${active.agentName}: ${active.triggeredBy} run`,
      });
    } catch {
      // A failed or cancelled run has recorded its own outcome; the queue goes on.
    }
    const ended = active;
    active = undefined;
    await notify(ended);
  }
}

async function notify(request: RunRequest): Promise<void> {
  if (request.notifyWorkflowId === undefined) {
    return;
  }
  try {
    await getExternalWorkflowHandle(request.notifyWorkflowId).signal(runEndedSignal, request.runId);
  } catch {
    // The waiting trigger is gone (terminated or timed out): nothing to tell.
  }
}
