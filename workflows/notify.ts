import { ParentClosePolicy, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { type NotificationEvent, type NotificationInput, notificationWorkflowId } from './approvals.js';
import type { notificationWorkflow } from './notification.workflow.js';
import type { RunFinalStatus } from './contracts.js';

/**
 * Starts a notification's delivery (notificationWorkflow) as a child that outlives its parent
 * (ABANDON: the agent's queue continues as new, the delivery goes on) and awaits only its start. Its
 * workflow id is the message's: a replay or a retried start finds it already started (whether it is
 * still running or has ended) and is a no-op.
 */
export async function startNotification(input: NotificationInput): Promise<void> {
  try {
    await startChild<typeof notificationWorkflow>('notificationWorkflow', {
      workflowId: notificationWorkflowId(input.messageId),
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    // @temporalio/common's WorkflowExecutionAlreadyStartedError, known by its name: workflow code imports
    // only @temporalio/workflow (the deterministic-imports rule), which does not re-export it.
    if ((err as Error | undefined)?.name !== 'WorkflowExecutionAlreadyStartedError') {
      throw err;
    }
  }
}

/** The run's events the agent's `notify.events` ask for; absent: the agent notifies of nothing. */
type NotifyEvents = readonly NotificationEvent[] | undefined;

/** approval_requested, after requestApproval, when the agent notifies of it (`msg_<approvalId>`). */
export async function notifyApprovalRequested(
  events: NotifyEvents,
  ids: { agentId?: string; runId: string; approvalId: string },
): Promise<void> {
  if (events?.includes('approval_requested') !== true || ids.agentId === undefined) {
    return;
  }
  await startNotification({
    messageId: `msg_${ids.approvalId}`,
    event: 'approval_requested',
    agentId: ids.agentId,
    runId: ids.runId,
    approvalId: ids.approvalId,
  });
}

/**
 * run_completed or run_failed, once the run has ended (its row says so) and before its archive, when
 * the agent notifies of it (`msg_<runId>_<event>`). A cancelled run notifies of nothing.
 */
export async function notifyRunOutcome(
  events: NotifyEvents,
  ended: { agentId: string; runId: string; status: RunFinalStatus },
): Promise<void> {
  const event: NotificationEvent | undefined =
    ended.status === 'completed' ? 'run_completed' : ended.status === 'failed' ? 'run_failed' : undefined;
  if (event === undefined || events?.includes(event) !== true) {
    return;
  }
  await startNotification({
    messageId: `msg_${ended.runId}_${event}`,
    event,
    agentId: ended.agentId,
    runId: ended.runId,
  });
}
