import {
  ChildWorkflowCancellationType,
  condition,
  continueAsNew,
  executeChild,
  allHandlersFinished,
  makeContinueAsNewFunc,
  ParentClosePolicy,
  patched,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { type RunRequest, SEARCH_ATTRIBUTES, workflowIds } from './contracts.js';
import { agentRunWorkflow } from './agent-run.workflow.js';
import type { agentQueueWorkflow } from './agent-queue.workflow.js';
import { notifyRunEnded, runQueue } from './run-queue.js';

export interface AgentWorkflowInput {
  agentId: string;
  queue?: RunRequest[];
  deliveries?: Array<[string, string]>;
}

/**
 * The agent's run queue of old (`agent-<agentId>`): it ran each run as a child workflow `run-<runId>`.
 * Kept for the executions that began under it (their histories replay against this code): each moves
 * to agentQueueWorkflow, which runs each run itself, at its next request (the patch `inline-runs`),
 * carrying its queue over.
 */
export async function agentWorkflow(input: AgentWorkflowInput): Promise<void> {
  // Asked once, in the first workflow task: executions that began under this code let every handler
  // finish before a run starts (below); those that began before keep the order their history has.
  const handlersBeforeRun = patched('handlers-before-run');
  const state = runQueue(input.agentId, input.queue, input.deliveries);
  const { queue } = state;

  for (;;) {
    await condition(() => queue.length > 0 || workflowInfo().continueAsNewSuggested);
    if (patched('inline-runs')) {
      // This code runs each run in the queue's own execution: hand the queue over.
      await condition(allHandlersFinished);
      await makeContinueAsNewFunc<typeof agentQueueWorkflow>({ workflowType: 'agentQueueWorkflow' })({
        agentId: input.agentId,
        queue,
        deliveries: state.deliveries(),
      });
    }
    if (queue.length === 0 || workflowInfo().continueAsNewSuggested) {
      // Keep the history short: hand the queue to a fresh run of this workflow once handlers are done.
      await condition(allHandlersFinished);
      await continueAsNew<typeof agentWorkflow>({ agentId: input.agentId, queue, deliveries: state.deliveries() });
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
    const active = queue.shift()!;
    state.active = active;
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
    state.active = undefined;
    await notifyRunEnded(active);
  }
}
