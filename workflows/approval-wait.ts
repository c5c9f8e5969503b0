import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineUpdate,
  proxyActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { notifyApprovalRequested } from './notify.js';
import {
  AGENT_HANDLERS,
  type ApprovalDecider,
  type ApprovalDecision,
  type ApprovalPolicy,
  type ApprovalScope,
  type ApprovalStatus,
  type DecideApprovalInput,
  FAILURE,
  type ModelContentBlock,
  type RunContext,
  type RunLogIds,
  type RunToolRoute,
  type SettleApprovalInput,
  type ToolResultBlock,
} from './contracts.js';

/** What the Update answers: the outcome recorded (`cancelled` when the run was cancelled meanwhile). */
export type DecideApprovalResult = Exclude<ApprovalStatus, 'pending'>;

export const decideApprovalUpdate = defineUpdate<DecideApprovalResult, [DecideApprovalInput]>(
  AGENT_HANDLERS.decideApproval,
);

/** The longest note a decision may carry (the API's limit too). */
export const MAX_APPROVAL_NOTE = 1000;

/**
 * The approvals' bookkeeping: regular activities (their scheduled events are the timeline's
 * `approval_requested` and `approval_decided`), retried for a long time (the database may be restarting).
 */
const approvals = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    backoffCoefficient: 2,
    nonRetryableErrorTypes: [FAILURE.validationError],
  },
});

/** The call a run waits on: at most one at a time (a run's tool calls go one after another). */
interface Pending {
  runId: string;
  approvalId: string;
  expiresAtMs: number;
  decision?: { decision: ApprovalDecision; note: string | null; by: ApprovalDecider };
  /** The wait is over (decided, expired or cancelled): no decision is taken any more. */
  closed: boolean;
  /** settleApproval has completed with this outcome. */
  settled?: DecideApprovalResult;
}

/**
 * Shared by the agent's queue (whose execution receives the Update) and the run it executes (which
 * waits): the pending call, if any.
 */
export interface ApprovalGate {
  pending: Pending | undefined;
}

const refused = (message: string): ApplicationFailure =>
  ApplicationFailure.create({ message, type: FAILURE.validationError, nonRetryable: true });

/** The Update's input as sent (the API built it; an Update may come from any client of the namespace). */
function checkInput(input: unknown): asserts input is DecideApprovalInput {
  const i = input as Partial<DecideApprovalInput> | null | undefined;
  if (typeof i !== 'object' || i === null || typeof i.runId !== 'string' || typeof i.approvalId !== 'string') {
    throw refused('A decision names the run and the approval it decides');
  }
  if (i.decision !== 'approve' && i.decision !== 'deny') {
    throw refused('A decision is either approve or deny');
  }
  if (i.note !== null && i.note !== undefined && (typeof i.note !== 'string' || i.note.length > MAX_APPROVAL_NOTE)) {
    throw refused(`A note is a text of at most ${MAX_APPROVAL_NOTE} characters`);
  }
  if (typeof i.by !== 'object' || i.by === null || typeof i.by.userId !== 'string' || typeof i.by.name !== 'string') {
    throw refused('A decision names the person who took it');
  }
}

/**
 * The queue's handler of `decideApproval`. Its validator refuses (before anything is written to the
 * history) a decision for a run that does not wait, for another approval than the pending one, for one
 * decided already or expired; the handler records the decision and answers once settleApproval has
 * completed, so whoever sent it reads the row decided.
 */
export function approvalGate(): ApprovalGate {
  const gate: ApprovalGate = { pending: undefined };
  setHandler(
    decideApprovalUpdate,
    async (input: DecideApprovalInput): Promise<DecideApprovalResult> => {
      const pending = gate.pending;
      if (pending === undefined || pending.decision !== undefined || pending.closed) {
        // Another decision got in between this one's validation and now.
        throw refused('This approval was decided already');
      }
      pending.decision = { decision: input.decision, note: input.note ?? null, by: input.by };
      await condition(() => pending.settled !== undefined);
      return pending.settled!;
    },
    {
      validator: (input: DecideApprovalInput): void => {
        checkInput(input);
        const pending = gate.pending;
        if (pending === undefined || pending.runId !== input.runId) {
          throw refused('The run is not waiting for a decision');
        }
        if (pending.approvalId !== input.approvalId) {
          throw refused('The run is not waiting for this approval');
        }
        if (pending.decision !== undefined || pending.closed) {
          throw refused('This approval was decided already');
        }
        if (Date.now() >= pending.expiresAtMs) {
          throw refused('This approval has expired');
        }
      },
    },
  );
  return gate;
}

type ToolUse = Extract<ModelContentBlock, { type: 'tool_use' }>;

/** Whether a call of `tool` waits for a decision under the run's policy. */
export function needsApproval(
  policy: ApprovalPolicy | undefined,
  tool: RunToolRoute,
): tool is RunToolRoute & {
  scope: ApprovalScope;
} {
  return policy !== undefined && tool.scope !== undefined && (policy.scopes as string[]).includes(tool.scope);
}

/**
 * Waits for a person's decision on a call: records the request (the pending row), waits on a durable
 * timer for the Update or the policy's timeout, records the outcome. Undefined: approved, make the
 * call; else the tool result the model gets instead. `context`: the run's (its `approvals` policy holds). Cancelled while waiting: the request is settled
 * `cancelled` (whatever else is cancelled) and the cancellation goes on.
 */
export async function awaitApproval(
  gate: ApprovalGate,
  ids: RunLogIds & { runId: string },
  context: RunContext,
  tool: RunToolRoute & { scope: ApprovalScope },
  use: ToolUse,
): Promise<ToolResultBlock | undefined> {
  const policy = context.approvals!;
  const approvalId = uuid4();
  const requestedAtMs = Date.now();
  const pending: Pending = {
    runId: ids.runId,
    approvalId,
    expiresAtMs: requestedAtMs + policy.timeoutSeconds * 1000,
    closed: false,
  };
  const settle = async (outcome: Pick<SettleApprovalInput, 'status' | 'by' | 'note'>): Promise<void> => {
    pending.closed = true;
    try {
      await CancellationScope.nonCancellable(() =>
        approvals.settleApproval({ ...ids, approvalId, ...outcome, decidedAt: new Date(Date.now()).toISOString() }),
      );
    } finally {
      pending.settled = outcome.status;
      gate.pending = undefined;
    }
  };
  // Open before the row is written: whoever reads the pending row may decide at once.
  gate.pending = pending;
  try {
    await approvals.requestApproval({
      ...ids,
      approvalId,
      siteId: tool.siteId,
      siteName: tool.siteName,
      tool: tool.tool,
      input: use.input,
      scope: tool.scope,
      requestedAt: new Date(requestedAtMs).toISOString(),
      expiresAt: new Date(pending.expiresAtMs).toISOString(),
    });
    // Once the request is recorded (the notification reads its row), when the agent notifies of it.
    await notifyApprovalRequested(context.notify, { agentId: ids.agentId, runId: ids.runId, approvalId });
    const left = pending.expiresAtMs - Date.now();
    if (left > 0) {
      await condition(() => pending.decision !== undefined, left);
    }
  } catch (err) {
    // Cancelled while asking or waiting (or the request could not be recorded): the row, if written,
    // does not stay pending.
    await settle({ status: 'cancelled', by: null, note: null }).catch(() => undefined);
    throw err;
  }
  const decision = pending.decision;
  if (decision === undefined) {
    await settle({ status: 'expired', by: null, note: null });
    return refusal(use, `no decision by ${new Date(pending.expiresAtMs).toISOString()}`);
  }
  const approved = decision.decision === 'approve';
  await settle({ status: approved ? 'approved' : 'denied', by: decision.by, note: decision.note });
  if (approved) {
    return undefined;
  }
  return refusal(use, `denied by ${decision.by.name}${decision.note ? `: ${decision.note}` : ''}`);
}

function refusal(use: ToolUse, why: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: use.id, content: `The call was not approved: ${why}`, is_error: true };
}
