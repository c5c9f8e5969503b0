/**
 * Everything the API, the worker and the workflows agree on: search attributes, signals, updates,
 * queries and the I/O types (a run's request and end in run-request.ts, its turns in run-turns.ts,
 * both re-exported here). Imported by workflow code, so only deterministic imports here.
 */
import type { ArchiveRunsInput, RunRequest } from './run-request.js';

export * from './approvals.js';
export * from './run-request.js';
export * from './run-turns.js';

/**
 * Search attributes every run carries, so an operator can filter runs in the Temporal UI. Written
 * as the `{ name, type }` keys @temporalio/common's defineSearchAttributeKey returns: workflow code
 * imports only @temporalio/workflow, which does not re-export that helper.
 */
export const SEARCH_ATTRIBUTES = {
  agentId: { name: 'AgentId', type: 'KEYWORD' },
  userId: { name: 'UserId', type: 'KEYWORD' },
  /** The runs an execution of the agent's queue ran (Temporal keeps `RunId` for its own). */
  runIds: { name: 'AgentRunIds', type: 'KEYWORD_LIST' },
} as const;

/** Name → Temporal type, for registering the attributes on a server. */
export const SEARCH_ATTRIBUTE_TYPES: Record<string, 'KEYWORD' | 'KEYWORD_LIST'> = {
  AgentId: 'KEYWORD',
  UserId: 'KEYWORD',
  AgentRunIds: 'KEYWORD_LIST',
};

/**
 * The field a workflow log line names our run id in, where the workflow id does not (the queue runs
 * each run itself): the SDK's own `runId` on a workflow line is Temporal's execution id. The worker's
 * logger writes it as `runId` (src/temporal/runtime-logger.ts).
 */
export const RUN_LOG_FIELD = 'agentsiteRunId';

/** Workflow ids come from our ids. */
export const workflowIds = {
  agent: (agentId: string): string => `agent-${agentId}`,
  schedule: (agentId: string): string => `schedule-${agentId}`,
  scheduledTrigger: (agentId: string): string => `scheduled-${agentId}`,
  /** The daily clean-up of old runs (RUN_RETENTION_DAYS), one per task queue (one per deployment). */
  runRetention: (taskQueue: string): string => `run-retention-${taskQueue}`,
  /** The reconciler of ended runs without an archive (terminated, or ended before archiving existed). */
  runReconcile: (taskQueue: string): string => `run-reconcile-${taskQueue}`,
  /** The reconciler of card purchases still pending (a missed Stripe webhook). */
  purchaseReconcile: (taskQueue: string): string => `purchase-reconcile-${taskQueue}`,
};

/** Names of the agent queue's handlers (the API calls them by name; the workflow defines them). */
export const AGENT_HANDLERS = {
  enqueueRun: 'enqueueRun',
  /**
   * Webhooks and schedules' firings: a signal is durable once the server accepts it, without a round
   * trip through a worker (a firing's request is skipped if it finds the agent busy: see runSkipped).
   */
  enqueueRunSignal: 'enqueueRunSignal',
  cancelQueuedRun: 'cancelQueuedRun',
  /** Ends a run the queue holds: queued (taken out) or active (cancelled; answers once it has ended). */
  cancelRun: 'cancelRun',
  agentState: 'agentState',
  runEnded: 'runEnded',
  /** To a schedule's firing: the queue skipped its run (it had one queued or active); the run id. */
  runSkipped: 'runSkipped',
  /** Approvals: a person's decision on the run's pending call (DecideApprovalInput; answers once recorded). */
  decideApproval: 'decideApproval',
} as const;

/** ApplicationFailure types: the specification's codes, carried from activities to the API. */
export const FAILURE = {
  agentAlreadyRunning: 'AGENT_ALREADY_RUNNING',
  runSkipped: 'RUN_SKIPPED',
  noCredits: 'NO_CREDITS',
  modelError: 'MODEL_ERROR',
  toolExecutionError: 'TOOL_EXECUTION_ERROR',
  outgoingRateLimited: 'OUTGOING_RATE_LIMITED',
  validationError: 'VALIDATION_ERROR',
  agentNotFound: 'AGENT_NOT_FOUND',
} as const;

export interface EnqueueResult {
  runId: string;
  /** 0 = runs next (or now); n = n runs ahead of it. */
  queuePosition: number;
  /** A repeated delivery id: the first delivery's run is returned. */
  duplicate: boolean;
}

/** What cancelRun did: `dequeued` (never started), `cancelled` (it was active and has ended), `unknown`. */
export type CancelRunResult = 'dequeued' | 'cancelled' | 'unknown';

/** The input of each execution of the agent's queue (agentQueueWorkflow), carried over continue-as-new. */
export interface AgentQueueInput {
  agentId: string;
  /** How long an execution lasts before it continues as new (AGENT_QUEUE_EXECUTION_SECONDS). */
  executionSeconds?: number;
  queue?: RunRequest[];
  /** Delivery id → run id, for de-duplication. */
  deliveries?: Array<[string, string]>;
  /** Trace headers of queued requests (the traced bundle's interceptors carry them; opaque here). */
  traces?: Record<string, unknown>;
  /**
   * The runs an execution ran are archived by the next one (a regular activity started as it begins,
   * beside its first run), not in the hand-over's own workflow task: requests that arrive at the
   * hand-over do not wait for the archive (nor for it twice, when their arrival failed that task and
   * its local activity ran again). Set by every start and carried over; an execution started without
   * it (before this input existed) archives at its own hand-over, and hands over with it set. An input,
   * not a patch: a patch would cost every execution a TemporalChangeVersion upsert (an action).
   */
  archiveAfterHandover?: boolean;
  /** The runs the previous execution ran, for this one to archive (archiveAfterHandover). */
  archive?: ArchiveRunsInput;
}

export interface AgentQueueState {
  activeRunId: string | null;
  queuedRunIds: string[];
}

/** One batch of the run retention clean-up: how many runs it deleted, and whether more are due. */
export interface DeleteExpiredRunsResult {
  deleted: number;
  more: boolean;
}

/** Where a run reconciler's batch goes on from: the last run it looked at (queued_at, id). */
export interface ReconcileRunsCursor {
  queuedAt: string;
  id: string;
}

/** One batch of the run reconciler: runs it looked at, runs it ended or archived, and where to go on (null: done). */
export interface ReconcileRunsResult {
  examined: number;
  reconciled: number;
  next: ReconcileRunsCursor | null;
}

export interface ScheduledTriggerInput {
  agentId: string;
  /**
   * Ask for the run in a local activity, in the trigger's first workflow task: no activity task
   * through the server, nor the workflow task its result would start, at each firing. Set in the
   * schedules the service writes; a schedule written before it asks in an activity (an input, not a
   * patch: a patch would cost every firing a TemporalChangeVersion upsert, an action).
   */
  localRequest?: boolean;
}

export interface DropSkippedScheduledRunInput {
  agentId: string;
  runId: string;
}

export interface ScheduledTriggerResult {
  runId?: string;
  skipped?: string;
}

export interface EchoInput {
  message: string;
}

export interface EchoOutput {
  message: string;
  handledBy: string;
}
