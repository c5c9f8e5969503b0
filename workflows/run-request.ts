/**
 * A run as the API asks for it and as it ends: the request the agent's queue receives, how a run
 * ended, and its first message. Part of the contracts (contracts.ts re-exports it); imported by
 * workflow code, so only deterministic imports here.
 */

export type RunTrigger = 'manual' | 'schedule' | 'webhook';

/** How a request joins the agent's queue. */
export type EnqueueMode =
  /** manual: refused (AGENT_ALREADY_RUNNING) while a run is queued or active */
  | 'reject_if_busy'
  /** webhook: always queued, FIFO */
  | 'queue'
  /** schedule: skipped while a run is queued or active */
  | 'skip_if_busy';

export interface RunRequest {
  runId: string;
  agentId: string;
  userId: string;
  agentName: string;
  triggeredBy: RunTrigger;
  /** Text given to a manual run. */
  input: string | null;
  /**
   * Null: the webhook's payload stays out of Temporal, in the run's row, which the run's first turn
   * reads (see triggerMessage).
   */
  payload: unknown;
  /**
   * True when the webhook's `action` replaces the system prompt for this run (the text is the
   * payload's own, in the row); null otherwise.
   */
  actionOverride: boolean | null;
  deliveryId: string | null;
  mode: EnqueueMode;
  /** A workflow to signal when this run ends (the scheduled trigger waits for its run). */
  notifyWorkflowId?: string;
  requestedAt: string;
  /**
   * The id of the HTTP request that asked for the run (X-Request-Id), so the run's log lines join
   * the request's. Optional: a schedule's firing has none.
   */
  requestId?: string;
}

/**
 * The ids an activity's log lines carry besides the run's own id (the activity log interceptor reads
 * them from the input): optional, as a model turn's completion records the run without them.
 */
export interface RunLogIds {
  agentId?: string;
  userId?: string;
  requestId?: string;
}

export type RunFinalStatus = 'completed' | 'failed' | 'cancelled';

/**
 * Runs an execution of an agent's queue holds before it hands over (continues as new with the rest
 * of the queue): see agent-queue.workflow.ts. Benchmark 10 counts one execution's worth of runs.
 */
export const MAX_RUNS_PER_EXECUTION = 20;

/**
 * What `AgentRunIds` lists when a run starts: the runs the execution ran, and (so that a burst costs
 * one upsert, not one a run) those queued behind that it will run too, never more than it runs. The
 * attribute's value is bounded (2 KB on the dev server): listing a whole queue of 50 runs or more
 * failed the workflow task, again at every retry, and the agent's runs went no further.
 */
export function runIdsToList(ran: readonly string[], queued: readonly string[]): string[] {
  return [...ran, ...queued.slice(0, Math.max(0, MAX_RUNS_PER_EXECUTION - ran.length))];
}

/**
 * patched(): the queue archives the runs an execution ran in one step at its hand-over (archiveRuns)
 * rather than each right after it ended, and lists a run in `AgentRunIds` together with the runs
 * queued behind it. Executions that began before it keep archiving and listing each run on its own.
 */
export const ARCHIVE_AT_HANDOVER_PATCH = 'archive-at-handover';

/** The runs one execution of an agent's queue ran, archived together at or after its hand-over. */
export interface ArchiveRunsInput extends RunLogIds {
  runs: Array<{ runId: string; status: RunFinalStatus; fromEventId: number }>;
  /**
   * The execution (Temporal run id) that ran them, when the next execution archives them; absent when
   * the execution that ran them asks (at its hand-over). The workflow id is always the asking one's.
   */
  executionRunId?: string;
}

export interface RunError {
  error: string;
  code: string;
}

export interface FinishRunInput extends RunLogIds {
  runId: string;
  /**
   * Where the run begins in the history of the execution that ran it (the agent's queue runs several
   * runs in one execution): the archive reads it from there.
   */
  fromEventId?: number;
  status: RunFinalStatus;
  output?: string;
  error?: RunError;
}

/**
 * A webhook payload's `action`, the text that replaces the agent's system prompt when the agent
 * allows it: a non-blank string, else null. The API decides with it whether a run takes the action
 * (its row's `webhook_action`), the worker reads the text from the row's payload with it.
 */
export function webhookAction(payload: unknown): string | null {
  const action = (payload as { action?: unknown } | null | undefined)?.action;
  return typeof action === 'string' && action.trim() !== '' ? action : null;
}

/** What started a run, as its row records it: the first message of its conversation. */
export interface RunTriggerFields {
  triggeredBy: RunTrigger;
  input: string | null;
  payload: unknown;
  queuedAt: Date;
}

/** The run's first message to the model: what triggered it (manual text, the webhook's payload, the schedule's time). */
export function triggerMessage(trigger: RunTriggerFields): string {
  switch (trigger.triggeredBy) {
    case 'manual':
      return trigger.input ?? 'Run now.';
    case 'webhook':
      return `Triggered by: Webhook. Payload received:\n${JSON.stringify(trigger.payload, null, 2)}`;
    case 'schedule':
      return `Triggered by: Schedule at ${trigger.queuedAt.toISOString()}.`;
  }
}
