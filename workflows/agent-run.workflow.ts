import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { type ApprovalGate, awaitApproval, needsApproval } from './approval-wait.js';
import {
  type ArchiveRunsInput,
  FAILURE,
  MAX_DURABLE_WAIT_SECONDS,
  MAX_MODEL_TURNS,
  MAX_RATE_LIMIT_WAITS,
  MAX_TURN_INPUT_BYTES,
  type ModelContentBlock,
  type ModelMessage,
  type ModelTurnInput,
  type NotificationEvent,
  RATE_LIMIT_TIMER_SUMMARY,
  RUN_LOG_FIELD,
  RUN_TOOL_SETS_PATCH,
  type FinishRunInput,
  type RunContext,
  type RunError,
  type RunLogIds,
  type RunRequest,
  type RunToolRoute,
  type ToolResultBlock,
  modelContentOf,
} from './contracts.js';

/**
 * The bookkeeping of a run that ends otherwise than by its last model turn (failure, cancellation),
 * and the archive of every ended run's timeline: local activities (no round trip through the server),
 * retried for a long time (the database may be restarting). A run that completes is started and
 * finished by its model turns (see ModelTurnInput).
 */
const records = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/**
 * The archive of the runs an execution ran, at its hand-over (an execution started without
 * archiveAfterHandover; the others: afterHandover below): one local activity for up to
 * MAX_RUNS_PER_EXECUTION runs, reading the execution's history once. A local activity, as the per-run
 * archive was: the batch reads at most the history Temporal lets an execution grow to before it
 * suggests continuing as new (a few MB) and writes one row per run, well under a second as a rule, so
 * a minute an attempt is ample and a regular activity (its task through the server) would buy
 * nothing. Retried for ten minutes at most (the database may be restarting): past that the queue hands
 * over without it and the run reconciler archives the runs from the closed execution's history.
 */
const handover = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/**
 * The archive of the runs the previous execution ran, by the execution after it: a regular activity,
 * so the execution's runs go on beside it (a local activity would hold the workflow task, and every
 * run behind it, until it ended). The same attempts and the same ten minutes as at the hand-over.
 */
const afterHandover = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/** One model turn: retried on provider errors that can pass (429, 5xx, overload, network). */
const model = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumAttempts: 4,
    nonRetryableErrorTypes: [FAILURE.noCredits, FAILURE.validationError],
  },
});

/** One tool call: heartbeats, so a worker that dies mid-call is noticed within seconds. */
const tools = proxyActivities<Activities>({
  startToCloseTimeout: '45 seconds',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumAttempts: 5,
    nonRetryableErrorTypes: [FAILURE.outgoingRateLimited, FAILURE.validationError, FAILURE.noCredits],
  },
});

/** How a run ended, as the workflow that executed it knows it. */
export interface RunEnd {
  ended: FinishRunInput;
  cancelled: boolean;
  failure: RunError | undefined;
  output: string;
  /** The events the run's context said to notify of (undefined: it ended before turn 1 gave one). */
  notify: NotificationEvent[] | undefined;
}

/**
 * A run's turns and the record of how it ended: model turn → tool calls → model turn … until the
 * model stops, the turn limit, cancellation (of the scope this is called in), or the credits end it.
 * The agent's queue (agent-queue.workflow.ts) runs each run with it, in its own execution. Ids only in
 * its log lines; `logRunId`: the run's id, as the line names it (the workflow id is the queue's).
 */
export async function executeRun(request: RunRequest, logRunId?: string, gate?: ApprovalGate): Promise<RunEnd> {
  const ids = { ...logIds(request), ...(logRunId !== undefined ? { [RUN_LOG_FIELD]: logRunId } : {}) };
  log.info('run started', { ...ids, triggeredBy: request.triggeredBy });
  let failure: RunError | undefined;
  let cancelled = false;
  let outcome: { output: string; recorded: boolean } = { output: '', recorded: false };
  const seen: { context?: RunContext } = {};
  try {
    outcome = await loop(request, gate ?? { pending: undefined }, seen);
  } catch (err) {
    if (isCancellation(err)) {
      cancelled = true;
    } else {
      failure = runErrorOf(err);
    }
  }
  const ended: FinishRunInput = {
    ...logIds(request),
    runId: request.runId,
    status: cancelled ? 'cancelled' : failure ? 'failed' : 'completed',
    output: outcome.output,
    error: failure,
  };
  if (cancelled || failure !== undefined || !outcome.recorded) {
    await CancellationScope.nonCancellable(() => records.finishRun(ended));
  }
  log.info('run ended', { ...ids, status: ended.status, ...(failure ? { code: failure.code } : {}) });
  return { ended, cancelled, failure, output: outcome.output, notify: seen.context?.notify };
}

/**
 * Keeps an ended run's timeline in the database (a local activity: no task through the server), as
 * executions begun before 'archive-at-handover' do once each run has ended (replayed; see archiveRuns).
 * Refused only when the run's row is gone with its agent: its history then stays its timeline.
 */
export async function archiveRun(ended: FinishRunInput): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() => records.archiveRun(ended));
  } catch {
    // Nothing to keep it for.
  }
}

/**
 * Keeps the timelines of the runs an execution ran (the agent's queue, at its hand-over). A run whose
 * row is gone is skipped; a batch that fails for ten minutes is left to the run reconciler.
 */
export function archiveRuns(input: ArchiveRunsInput): Promise<void> {
  return archiveBatch(handover, input);
}

/**
 * Keeps the timelines of the runs the previous execution ran (`input.executionRunId`), from the
 * execution after it (AgentQueueInput.archiveAfterHandover); failures as at the hand-over.
 */
export function archiveHandedOverRuns(input: ArchiveRunsInput): Promise<void> {
  return archiveBatch(afterHandover, input);
}

async function archiveBatch(via: Pick<Activities, 'archiveRuns'>, input: ArchiveRunsInput): Promise<void> {
  if (input.runs.length === 0) {
    return;
  }
  try {
    await CancellationScope.nonCancellable(() => via.archiveRuns(input));
  } catch {
    // The reconciler archives them once their execution has closed.
  }
}

/** The ids each activity's log lines carry (the activity log interceptor reads them from the input). */
function logIds(request: RunRequest): RunLogIds {
  return {
    agentId: request.agentId,
    userId: request.userId,
    ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
  };
}

/**
 * The turns of the run; `recorded`: the last turn has marked the run completed. The conversation's
 * first message, what triggered the run, is the activity's to build from the run's row: a webhook's
 * payload is not carried through Temporal with every turn.
 */
async function loop(
  request: RunRequest,
  gate: ApprovalGate,
  seen: { context?: RunContext },
): Promise<{ output: string; recorded: boolean }> {
  const messages: ModelMessage[] = [];
  let context: RunContext | undefined;
  // The routes of the tools the model has called (a run that carries its tool set by hash).
  const routes = new Map<string, RunToolRoute>();
  let output = '';
  for (let turn = 1; turn <= MAX_MODEL_TURNS; turn += 1) {
    const input: ModelTurnInput = {
      ...logIds(request),
      runId: request.runId,
      userId: request.userId,
      messages,
      ...(context === undefined
        ? { start: request, ...(patched(RUN_TOOL_SETS_PATCH) ? { toolSets: true as const } : {}) }
        : { context }),
      last: turn === MAX_MODEL_TURNS,
    };
    assertTurnFits(input);
    const answer = await model.modelTurn(input);
    context ??= answer.context;
    seen.context = context;
    for (const route of answer.routes ?? []) {
      routes.set(route.name, route);
    }
    messages.push({ role: 'assistant', content: answer.content });
    if (answer.text !== '') {
      output = answer.text;
    }
    if (answer.ended === true || context === undefined) {
      return { output, recorded: answer.ended === true };
    }
    const uses = answer.content.filter(
      (b): b is Extract<ModelContentBlock, { type: 'tool_use' }> => b.type === 'tool_use',
    );
    const results: ToolResultBlock[] = [];
    for (const use of uses) {
      const tool = context.tools?.find((t) => t.name === use.name) ?? routes.get(use.name);
      results.push(await callTool(request, context, tool, use, gate));
    }
    messages.push({ role: 'user', content: results });
  }
  return { output, recorded: false };
}

/**
 * A tool call; one whose scope the agent's policy lists waits for a person's decision first (a refusal
 * is the tool's result); a rate limit (the site's 429 or our outgoing limit) waits on a durable timer,
 * then retries.
 */
async function callTool(
  request: RunRequest,
  context: RunContext,
  tool: RunToolRoute | undefined,
  use: Extract<ModelContentBlock, { type: 'tool_use' }>,
  gate: ApprovalGate,
): Promise<ToolResultBlock> {
  if (tool === undefined) {
    return { type: 'tool_result', tool_use_id: use.id, content: `No tool named ${use.name}`, is_error: true };
  }
  if (needsApproval(context.approvals, tool)) {
    const refusal = await awaitApproval(gate, { ...logIds(request), runId: request.runId }, context, tool, use);
    if (refusal !== undefined) {
      return refusal;
    }
  }
  for (let waits = 0; ; waits += 1) {
    try {
      const result = await tools.callTool({
        ...logIds(request),
        runId: request.runId,
        userId: request.userId,
        siteId: tool.siteId,
        siteName: tool.siteName,
        tool: tool.tool,
        input: use.input,
      });
      return { type: 'tool_result', tool_use_id: use.id, content: modelContentOf(result, tool.protocol) };
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (!(cause instanceof ApplicationFailure)) {
        throw err;
      }
      if (cause.type === FAILURE.outgoingRateLimited && waits < MAX_RATE_LIMIT_WAITS) {
        const details = cause.details?.[0] as { retryAfterSeconds?: number } | undefined;
        const waitSeconds = Math.max(1, details?.retryAfterSeconds ?? 60);
        // The activity already refuses a site's longer Retry-After; this keeps the cap whatever the source.
        if (waitSeconds > MAX_DURABLE_WAIT_SECONDS) {
          return {
            type: 'tool_result',
            tool_use_id: use.id,
            content: `${tool.siteName} asked to wait ${waitSeconds} s, over the ${MAX_DURABLE_WAIT_SECONDS} s cap; not waiting`,
            is_error: true,
          };
        }
        await sleep(waitSeconds * 1000, { summary: RATE_LIMIT_TIMER_SUMMARY });
        continue;
      }
      if (cause.type === FAILURE.noCredits) {
        throw cause;
      }
      return { type: 'tool_result', tool_use_id: use.id, content: cause.message, is_error: true };
    }
  }
}

/**
 * A turn whose input Temporal would refuse (over its payload limit) would stop the agent's queue:
 * the run fails instead, saying why, and the queue goes on.
 */
function assertTurnFits(input: ModelTurnInput): void {
  const bytes = new TextEncoder().encode(JSON.stringify(input)).length;
  if (bytes > MAX_TURN_INPUT_BYTES) {
    throw ApplicationFailure.nonRetryable(
      `The run's conversation has grown to ${bytes} bytes, over the ${MAX_TURN_INPUT_BYTES} one model turn may carry`,
      FAILURE.modelError,
    );
  }
}

function runErrorOf(err: unknown): RunError {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    return { error: cause.message, code: cause.type ?? 'MODEL_ERROR' };
  }
  return { error: cause instanceof Error ? cause.message : String(cause), code: FAILURE.modelError };
}
