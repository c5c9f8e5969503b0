import { hostname } from 'node:os';
import { Context } from '@temporalio/activity';
import type {
  CallToolInput,
  CallToolOutput,
  DeleteExpiredRunsResult,
  EchoInput,
  EchoOutput,
  ArchiveRunsInput,
  FinishRunInput,
  ModelCall,
  ModelTurnInput,
  ModelTurnOutput,
  ReconcileRunsCursor,
  ReconcileRunsResult,
  RequestApprovalInput,
  RunContext,
  RunRequest,
  RunToolSet,
  ScheduledTriggerInput,
  DropSkippedScheduledRunInput,
  ScheduledTriggerResult,
  SettleApprovalInput,
} from '../workflows/contracts.js';
import { endsRun, modelToolsOf, routesFor } from '../workflows/contracts.js';
import { ActivityError, classified, requireObjectInput } from './failures.js';
import { notifyActivities, type NotificationsPort } from './notify.js';
import { purchaseActivities, type PurchasesPort } from './purchases.js';

/** Run bookkeeping and the agent's queue, filled by the worker with the application's services. */
export interface RunsPort {
  /**
   * `execution`: the workflow execution that asks (from Temporal, not from the input). Also answers
   * the run's first message, built from its row (triggerMessage): it goes to the model, not back to
   * the workflow. `context` names the run's tool set by its hash (stored, and recorded on the run's
   * row); `toolSet` is that set.
   */
  startRun(
    request: RunRequest,
    execution: { workflowId: string; runId: string },
  ): Promise<{ context: RunContext; toolSet: RunToolSet; trigger: string }>;
  /**
   * A run's tool set by its hash (immutable: cached by the worker), checked against the hash; a set
   * that is gone or does not match is an error.
   */
  toolSet(hash: string): Promise<RunToolSet>;
  /**
   * Records how the run ended; `execution` as for startRun: only the workflow the run's row names
   * (and, once the run has started, the execution that started it) may end it.
   */
  finishRun(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void>;
  /** Keeps the ended run's timeline in the database; `execution` as for startRun. */
  archiveRun(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void>;
  /**
   * Keeps the timelines of the runs an execution ran; `execution`: the asking workflow's id (as for
   * startRun) and the execution that ran them.
   */
  archiveRuns(input: ArchiveRunsInput, execution: { workflowId: string; runId: string }): Promise<void>;
  /** One batch of the RUN_RETENTION_DAYS clean-up (the age is the worker's setting, not an input). */
  deleteExpiredRuns(): Promise<DeleteExpiredRunsResult>;
  /**
   * One batch of the run reconciler, from `after` (the previous batch's cursor; only where to go on,
   * the runs' state is read from the database and Temporal).
   */
  reconcileRuns(after: ReconcileRunsCursor | null): Promise<ReconcileRunsResult>;
  /**
   * `caller`: the workflow that asks (from Temporal, not the input), which must be a firing of the
   * agent's schedule (its scheduled-trigger workflow); it is also the one that waits for the run.
   */
  enqueueScheduledRun(
    agentId: string,
    caller: { workflowId: string; workflowType: string; runId: string },
  ): Promise<ScheduledTriggerResult>;
  /**
   * Drops the row of the firing's run, which the agent's queue skipped; `caller` as for
   * enqueueScheduledRun, and the run must be that firing's.
   */
  dropSkippedScheduledRun(
    agentId: string,
    runId: string,
    caller: { workflowId: string; workflowType: string; runId: string },
  ): Promise<void>;
}

export interface ModelPort {
  /** `reference` makes the credit charge of a turn idempotent across activity retries. */
  turn(input: ModelCall, reference: string, signal: AbortSignal, creditsChecked?: boolean): Promise<ModelTurnOutput>;
}

export interface ToolsPort {
  call(input: CallToolInput, idempotencyKey: string, signal: AbortSignal): Promise<CallToolOutput>;
}

/**
 * The `approvals` rows a run's waits write. The input is not trusted (see RunsPort.startRun): only the
 * execution that runs the run (`execution`, from Temporal) may write its rows.
 */
export interface ApprovalsPort {
  /** Writes the pending row (once: a retry or a repeated id changes nothing). */
  requestApproval(input: RequestApprovalInput, execution: { workflowId: string; runId: string }): Promise<void>;
  /** Writes the outcome of a pending row (a row decided already is left as it is). */
  settleApproval(input: SettleApprovalInput, execution: { workflowId: string; runId: string }): Promise<void>;
}

export interface ActivityDeps {
  workerIdentity: string;
  runs: RunsPort;
  approvals: ApprovalsPort;
  model: ModelPort;
  tools: ToolsPort;
  notifications: NotificationsPort;
  /** The purchase reconciler's port (the worker fills it; absent, its activity does nothing). */
  purchases?: PurchasesPort;
}

/**
 * A workflow bug: a model turn with neither the run's request (turn 1) nor its context. Carries no
 * spec code, so it is classified as INTERNAL_ERROR at the activity boundary.
 */
export class MissingRunContextError extends Error {
  override readonly name = 'MissingRunContextError';

  constructor() {
    super('modelTurn needs the run request (turn 1) or its context');
  }
}

const HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * Turn 1's context for the workflow: by its tool set's hash, or, for a workflow of the old code (it did
 * not ask for `toolSets`), with the system prompt and the tools themselves, as that code reads them.
 */
function contextFor(started: { context: RunContext; toolSet: RunToolSet }, byHash: boolean): RunContext {
  if (byHash) {
    return started.context;
  }
  const { toolSet: _hash, ...rest } = started.context;
  return { ...rest, system: started.toolSet.system, tools: started.toolSet.tools };
}

/** A later turn's tool set: read by its hash, or carried by a run of the old shape. */
async function toolSetOf(runs: RunsPort, context: RunContext): Promise<RunToolSet> {
  if (context.toolSet !== undefined) {
    return runs.toolSet(context.toolSet);
  }
  return { system: context.system ?? '', tools: context.tools ?? [] };
}

/** The workflow execution that scheduled the activity, as Temporal says (never from the input). */
function executionOf(ctx: Context): { workflowId: string; runId: string } {
  return { workflowId: ctx.info.workflowExecution?.workflowId ?? '', runId: ctx.info.workflowExecution?.runId ?? '' };
}

/** The asking workflow with its type (a scheduled trigger's activities check both). */
function triggerCaller(): { workflowId: string; workflowType: string; runId: string } {
  const ctx = Context.current();
  return { ...executionOf(ctx), workflowType: ctx.info.workflowType ?? '' };
}

/**
 * Heartbeats while `work` runs, so a dead worker is detected by the heartbeat timeout, not the long
 * one. Not at the start: Temporal counts the heartbeat timeout from the activity's start, and each
 * heartbeat sent is a write to the workflow's state on the server, so an activity shorter than the
 * interval (most model turns and tool calls) sends none.
 */
async function withHeartbeat<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    return await work(ctx.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}

/**
 * All activities, built over their ports (tests pass fakes; the worker passes Nest services). Their
 * `Context.log` lines carry workflowId, workflowRunId, activityType and attempt (the SDK adds them) and
 * the run's ids (the worker's log interceptor): each line passes only what is its own, ids and sizes.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...notifyActivities(deps),
    ...purchaseActivities(deps),
    async echo(input: EchoInput): Promise<EchoOutput> {
      requireObjectInput(input);
      Context.current().log.info('echo');
      return { message: input.message, handledBy: deps.workerIdentity || hostname() };
    },

    async finishRun(input: FinishRunInput): Promise<void> {
      requireObjectInput(input);
      Context.current().log.info('finishRun', { status: input.status });
      return classified(() => deps.runs.finishRun(input, executionOf(Context.current())));
    },

    /** The run's last step: its timeline kept in the database, so it outlives Temporal's retention. */
    async archiveRun(input: FinishRunInput): Promise<void> {
      requireObjectInput(input);
      Context.current().log.info('archiveRun', { status: input.status });
      return classified(() => deps.runs.archiveRun(input, executionOf(Context.current())));
    },

    /**
     * The runs an execution ran, archived together (one history read): by the next execution, which
     * names the one that ran them, or by that one at its hand-over. The workflow id is the asking
     * workflow's (from Temporal): a queue archives only its own agent's runs, each only for the
     * execution its row says ran it.
     */
    async archiveRuns(input: ArchiveRunsInput): Promise<void> {
      requireObjectInput(input);
      Context.current().log.info('archiveRuns', { runs: input.runs.length });
      const asking = executionOf(Context.current());
      const ranThem = typeof input.executionRunId === 'string' ? input.executionRunId : asking.runId;
      return classified(() => deps.runs.archiveRuns(input, { workflowId: asking.workflowId, runId: ranThem }));
    },

    async deleteExpiredRuns(): Promise<DeleteExpiredRunsResult> {
      Context.current().log.info('deleteExpiredRuns');
      return classified(() => deps.runs.deleteExpiredRuns());
    },

    /** The run reconciler's batch: runs whose execution ended without ending or archiving them. */
    async reconcileRuns(after: ReconcileRunsCursor | null): Promise<ReconcileRunsResult> {
      Context.current().log.info('reconcileRuns');
      return classified(() => deps.runs.reconcileRuns(after ?? null));
    },

    async enqueueScheduledRun(input: ScheduledTriggerInput): Promise<ScheduledTriggerResult> {
      requireObjectInput(input);
      Context.current().log.info('enqueueScheduledRun');
      return classified(() => deps.runs.enqueueScheduledRun(input.agentId, triggerCaller()));
    },

    /** The firing's run that the agent's queue skipped: its row goes. */
    async dropSkippedScheduledRun(input: DropSkippedScheduledRunInput): Promise<void> {
      requireObjectInput(input);
      Context.current().log.info('dropSkippedScheduledRun');
      return classified(() => deps.runs.dropSkippedScheduledRun(input.agentId, input.runId, triggerCaller()));
    },

    /** A model turn, with the run's start (turn 1) and completion (the last turn) recorded by it. */
    async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
      requireObjectInput(input);
      const info = Context.current().info;
      Context.current().log.info('modelTurn', { messageCount: input.messages.length });
      const reference = `run:${input.runId}:${info.workflowExecution?.runId}:${info.activityId}`;
      return withHeartbeat((signal) =>
        classified(async () => {
          // Turn 1's run and user are the ones startRun checks against the run's row: the turn must not
          // name others (they are charged for the turn). Later turns are checked by the model port.
          if (input.start !== undefined && (input.start.runId !== input.runId || input.start.userId !== input.userId)) {
            throw new ActivityError(
              'PERMISSION_DENIED',
              403,
              'The turn names another run or user than the run it starts',
            );
          }
          // Idempotent: a retried turn 1 finds the run active already.
          const started =
            input.start !== undefined
              ? await deps.runs.startRun(input.start, executionOf(Context.current()))
              : undefined;
          const context = started !== undefined ? contextFor(started, input.toolSets === true) : input.context;
          if (context === undefined) {
            throw new MissingRunContextError();
          }
          const set = started?.toolSet ?? (await toolSetOf(deps.runs, context));
          const tools = modelToolsOf(set.tools);
          const answer = await deps.model.turn(
            {
              runId: input.runId,
              userId: input.userId,
              model: context.model,
              system: set.system,
              // The run's first message, from its row: turn 1 has it from startRun, later turns read it
              // with their credit check.
              messages:
                started !== undefined
                  ? [{ role: 'user', content: started.trigger }, ...input.messages]
                  : input.messages,
              tools,
              ...(started === undefined ? { triggerFromRow: true } : {}),
            },
            reference,
            signal,
            input.start !== undefined, // startRun has just checked the balance
          );
          const ended = endsRun(answer, input.last);
          if (ended) {
            await deps.runs.finishRun(
              { runId: input.runId, status: 'completed', output: answer.text },
              executionOf(Context.current()),
            );
          }
          // A run that carries its tool set by hash gets the routes of the tools this answer calls.
          const routes = context.toolSet !== undefined ? { routes: routesFor(answer.content, set.tools) } : {};
          return { ...answer, ...(started !== undefined ? { context } : {}), ...routes, ended };
        }),
      );
    },

    /** A call waits for a person's decision: its pending row (the timeline's `approval_requested`). */
    async requestApproval(input: RequestApprovalInput): Promise<void> {
      requireObjectInput(input);
      Context.current().log.info('requestApproval', { approvalId: input.approvalId });
      return classified(() => deps.approvals.requestApproval(input, executionOf(Context.current())));
    },

    /** The wait's outcome on the row (the timeline's `approval_decided`). */
    async settleApproval(input: SettleApprovalInput): Promise<void> {
      requireObjectInput(input);
      Context.current().log.info('settleApproval', { approvalId: input.approvalId, status: input.status });
      return classified(() => deps.approvals.settleApproval(input, executionOf(Context.current())));
    },

    async callTool(input: CallToolInput): Promise<CallToolOutput> {
      requireObjectInput(input);
      const info = Context.current().info;
      Context.current().log.info('callTool', { siteId: input.siteId, tool: input.tool });
      // Same key on every attempt of this activity: a retried call has one effect at the site.
      const idempotencyKey = `${info.workflowExecution?.runId}-${info.activityId}`;
      return withHeartbeat((signal) => classified(() => deps.tools.call(input, idempotencyKey, signal)));
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
