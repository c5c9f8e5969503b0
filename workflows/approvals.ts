/**
 * Approvals and notifications: what the API, the worker and the workflows agree on. Part of the
 * contracts (contracts.ts re-exports it); imported by workflow code, so only deterministic imports.
 *
 * A run whose agent lists a tool's scope in `approvals.scopes` waits, before that call, for a person's
 * decision: the queue's workflow records the request (activity requestApproval, which writes the
 * `approvals` row and is the timeline's `approval_requested`), waits on a durable timer for the
 * `decideApproval` Update, then records the outcome (activity settleApproval: the row, and the
 * timeline's `approval_decided`). Nothing runs and nothing is charged while it waits.
 */

/** The scopes a policy may hold (a site tool's read calls never wait). */
export const APPROVAL_SCOPES = ['write', 'delete', 'admin'] as const;
export type ApprovalScope = (typeof APPROVAL_SCOPES)[number];

/** A policy's wait when it names none, and its bounds (seconds). */
export const APPROVAL_TIMEOUT = { defaultSeconds: 86_400, minSeconds: 60, maxSeconds: 7 * 86_400 } as const;

/** An agent's approval policy, as the run's context carries it (turn 1 reads it from the agent). */
export interface ApprovalPolicy {
  scopes: ApprovalScope[];
  timeoutSeconds: number;
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';
export type ApprovalDecision = 'approve' | 'deny';

/** Who decided, as the API names them (the Update's input; the API checked their role). */
export interface ApprovalDecider {
  userId: string;
  /** Shown in the timeline: the user's name, else their email. */
  name: string;
}

/** The Update `decideApproval`'s input, sent by the API to the run's agent queue (`agent-<agentId>`). */
export interface DecideApprovalInput {
  runId: string;
  approvalId: string;
  decision: ApprovalDecision;
  note: string | null;
  by: ApprovalDecider;
}

/** Activity requestApproval's input: the `approvals` row to write (pending) and the timeline's entry. */
export interface RequestApprovalInput {
  runId: string;
  agentId?: string;
  userId?: string;
  requestId?: string;
  approvalId: string;
  siteId: string;
  siteName: string;
  tool: string;
  input: unknown;
  scope: ApprovalScope;
  requestedAt: string;
  expiresAt: string;
}

/** Activity settleApproval's input: the row's outcome and the timeline's `approval_decided`. */
export interface SettleApprovalInput {
  runId: string;
  agentId?: string;
  userId?: string;
  requestId?: string;
  approvalId: string;
  status: Exclude<ApprovalStatus, 'pending'>;
  /** Null for expired and cancelled. */
  by: ApprovalDecider | null;
  note: string | null;
  decidedAt: string;
}

export const NOTIFICATION_EVENTS = ['approval_requested', 'run_completed', 'run_failed'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/**
 * One notification to send (the notification workflow's input): ids only. The activity that sends it
 * reads the agent's URL and secret, the run and the approval from the database, so neither the secret
 * nor run data travels through Temporal. `messageId` is the `webhook-id` of every attempt.
 */
export interface NotificationInput {
  messageId: string;
  event: NotificationEvent;
  agentId: string;
  runId: string;
  approvalId?: string;
}

/** The workflow id of one notification's delivery (one per message: a duplicate start is a no-op). */
export const notificationWorkflowId = (messageId: string): string => `notify-${messageId}`;
