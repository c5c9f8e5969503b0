/**
 * Everything the API, the worker and the workflows agree on: search attributes, signals, updates,
 * queries and the I/O types. Imported by workflow code, so only deterministic imports here.
 */

/**
 * Search attributes every run carries, so an operator can filter runs in the Temporal UI. Written
 * as the `{ name, type }` keys @temporalio/common's defineSearchAttributeKey returns: workflow code
 * imports only @temporalio/workflow, which does not re-export that helper.
 */
export const SEARCH_ATTRIBUTES = {
  agentId: { name: 'AgentId', type: 'KEYWORD' },
  userId: { name: 'UserId', type: 'KEYWORD' },
  triggeredBy: { name: 'TriggeredBy', type: 'KEYWORD' },
  /** The runs an execution of the agent's queue ran (Temporal keeps `RunId` for its own). */
  runIds: { name: 'AgentRunIds', type: 'KEYWORD_LIST' },
} as const;

/** Name → Temporal type, for registering the attributes on a server. */
export const SEARCH_ATTRIBUTE_TYPES: Record<string, 'KEYWORD' | 'KEYWORD_LIST'> = {
  AgentId: 'KEYWORD',
  UserId: 'KEYWORD',
  TriggeredBy: 'KEYWORD',
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
  run: (runId: string): string => `run-${runId}`,
  schedule: (agentId: string): string => `schedule-${agentId}`,
  scheduledTrigger: (agentId: string): string => `scheduled-${agentId}`,
  /** The daily clean-up of old runs (RUN_RETENTION_DAYS), one per task queue (one per deployment). */
  runRetention: (taskQueue: string): string => `run-retention-${taskQueue}`,
};

/** Names of the agent workflow's handlers (the API calls them by name; the workflow defines them). */
export const AGENT_HANDLERS = {
  enqueueRun: 'enqueueRun',
  /** Webhooks: a signal is durable once the server accepts it, without a round trip through a worker. */
  enqueueRunSignal: 'enqueueRunSignal',
  cancelQueuedRun: 'cancelQueuedRun',
  /** Ends a run the queue holds: queued (taken out) or active (cancelled; answers once it has ended). */
  cancelRun: 'cancelRun',
  agentState: 'agentState',
  runEnded: 'runEnded',
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
   * The webhook payload. Null in the requests the API sends since payloads stay out of Temporal: the
   * payload is in the run's row, which the run's turns read (see triggerMessage). Requests queued
   * before carry it whole; nothing reads it from here any more.
   */
  payload: unknown;
  /**
   * Whether the webhook's `action` replaces the system prompt for this run: the text is the payload's
   * own (in the row). Requests queued before carry the text itself.
   */
  actionOverride: string | boolean | null;
  deliveryId: string | null;
  mode: EnqueueMode;
  /** A workflow to signal when this run ends (the scheduled trigger waits for its run). */
  notifyWorkflowId?: string;
  requestedAt: string;
  /**
   * The id of the HTTP request that asked for the run (X-Request-Id), so the run's log lines join
   * the request's. Optional: requests queued before it existed, and schedule firings, have none.
   */
  requestId?: string;
}

/**
 * The ids an activity's log lines carry besides the run's own id: optional on every run activity's
 * input, as inputs scheduled by an older workflow version have none.
 */
export interface RunLogIds {
  agentId?: string;
  userId?: string;
  requestId?: string;
}

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
}

export interface AgentQueueState {
  activeRunId: string | null;
  queuedRunIds: string[];
}

export type RunFinalStatus = 'completed' | 'failed' | 'cancelled';

export interface RunError {
  error: string;
  code: string;
}

/** What the model sees of a tool (its name is unique across the agent's sites). */
export interface ModelTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** A model tool and the site tool it stands for. */
export interface RunTool extends ModelTool {
  siteId: string;
  siteName: string;
  tool: string;
}

/** What the model is shown of a run's tools (RunTool without the site it stands for). */
export function modelToolsOf(tools: RunTool[]): ModelTool[] {
  return tools.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
}

export interface RunContext {
  system: string;
  model: string;
  tools: RunTool[];
}

export type ModelContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string | Array<ModelContentBlock | ToolResultBlock>;
}

/** One call of the model for a run (what the model port takes). */
export interface ModelCall {
  runId: string;
  userId: string;
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  /** `messages` lacks the run's trigger: the turn reads it from the run's row and puts it first. */
  triggerFromRow?: boolean;
}

/**
 * A run's model turn. The run's bookkeeping rides on its turns instead of separate steps (each local
 * activity cost about 30 ms of workflow task here): turn 1 marks the run active and prepares its
 * context, and the turn that ends the run marks it completed.
 */
export interface ModelTurnInput extends RunLogIds {
  runId: string;
  userId: string;
  /**
   * The conversation so far. With `trigger: 'row'` it lacks its first message, the run's trigger,
   * which the activity builds from the run's row (triggerMessage): a webhook's payload or a manual
   * run's text is not carried through Temporal on every turn. Inputs scheduled before carry it.
   */
  messages: ModelMessage[];
  trigger?: 'row';
  /** Turn 1: the run's request (the turn starts the run and returns its context). */
  start?: RunRequest;
  /** Later turns: the context turn 1 returned. */
  context?: RunContext;
  /** The turn limit: the run ends with this turn whatever the model answers. */
  last: boolean;
}

export interface ModelTurnOutput {
  content: ModelContentBlock[];
  text: string;
  stopReason: string;
  usage: { inputTokens: number; outputTokens: number };
  credits: number;
  /** Turn 1: the run's context. */
  context?: RunContext;
  /** This turn ended the run, and the run's row already says `completed`. */
  ended?: boolean;
}

/** Whether a model answer ends the run (no tool to call, or no turn left). */
export function endsRun(answer: Pick<ModelTurnOutput, 'content' | 'stopReason'>, last: boolean): boolean {
  return last || answer.stopReason !== 'tool_use' || !answer.content.some((b) => b.type === 'tool_use');
}

export interface CallToolInput extends RunLogIds {
  runId: string;
  userId: string;
  siteId: string;
  siteName: string;
  tool: string;
  input: unknown;
}

export interface CallToolOutput {
  /** The site's answer; with `truncated`, the first MAX_TOOL_RESULT_BYTES of its JSON text, as a string. */
  result: unknown;
  durationMs: number;
  refreshed: boolean;
  /** The answer's JSON was longer than MAX_TOOL_RESULT_BYTES: its length in bytes. */
  truncated?: number;
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

/** One batch of the run retention clean-up: how many runs it deleted, and whether more are due. */
export interface DeleteExpiredRunsResult {
  deleted: number;
  more: boolean;
}

export interface ScheduledTriggerInput {
  agentId: string;
}

export interface ScheduledTriggerResult {
  runId?: string;
  skipped?: string;
}

/** Ends a run early: turns of the model per run. */
export const MAX_MODEL_TURNS = 20;

/**
 * The most of a tool's answer a run keeps (bytes of its JSON text): more would not fit the model's
 * context anyway, and every later turn of the run carries the conversation through Temporal, whose
 * payloads are limited (2 MB by default). A longer answer reaches the model and the timeline cut to
 * this, with a note of its length (toolResultContent).
 */
export const MAX_TOOL_RESULT_BYTES = 64 * 1024;

/**
 * What one model turn's input may carry of the conversation (bytes of its JSON): under Temporal's
 * default payload limit (2 MB) with room for the run's context. A run whose conversation outgrows it
 * fails (MODEL_ERROR, saying so) rather than give Temporal a command it would refuse, which would stop
 * the agent's queue with every run behind it.
 */
export const MAX_TURN_INPUT_BYTES = 1_500_000;

/** What the model is told of a tool's answer (the tool_result block's content). */
export function toolResultContent(output: Pick<CallToolOutput, 'result' | 'truncated'>): string {
  if (output.truncated === undefined) {
    return JSON.stringify(output.result);
  }
  return (
    `${String(output.result)}\n[cut: the answer was ${output.truncated} bytes; ` +
    `only its first ${MAX_TOOL_RESULT_BYTES} are kept]`
  );
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
/**
 * The longest durable wait a site's Retry-After (or our outgoing limit) may impose on a run's tool call:
 * past it the call fails instead, so one site cannot park an agent's queue for days.
 */
export const MAX_DURABLE_WAIT_SECONDS = 300;
/** Times a run waits out a rate limit for one tool call before giving the model an error. */
export const MAX_RATE_LIMIT_WAITS = 5;
/** The timer summary that marks a rate-limit wait in the history (the timeline shows it as `waiting`). */
export const RATE_LIMIT_TIMER_SUMMARY = 'rate_limit';

export interface EchoInput {
  message: string;
}

export interface EchoOutput {
  message: string;
  handledBy: string;
}
