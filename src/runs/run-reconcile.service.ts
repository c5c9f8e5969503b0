import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Client } from '@temporalio/client';
import { INTERNAL_FAILURE } from '../../activities/failures.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { executionGone } from '../temporal/execution-gone.js';
import { type ScheduleSync, syncMaintenanceSchedule } from '../temporal/maintenance-schedule.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import { type ReconcileRunsCursor, type ReconcileRunsResult, workflowIds } from '../../workflows/contracts.js';
import { RunArchiveService } from './run-archive.service.js';
import { RunReconcileRepository } from './run-reconcile.repository.js';
import type { RunEntity } from './run.entity.js';
import { RunsRepository } from './runs.repository.js';
import { RunsService } from './runs.service.js';

/** Runs one batch looks at (each costs at most a Temporal call, and a history read when archived). */
export const RECONCILE_BATCH = 100;
/**
 * How often the reconciler goes through the runs. Temporal keeps a closed execution's history for the
 * namespace's retention (a day at least in practice), so every 10 minutes finds an ended run many
 * times over before its history goes, and a user reads a terminated run as failed within minutes;
 * a pass costs one indexed read of the runs not yet archived and one Temporal call per agent queue
 * among them.
 */
const RECONCILE_INTERVAL = '10 minutes';
const RECONCILE_CATCHUP_WINDOW = '10 minutes';
/**
 * How long ago a run not ended must have been queued before the reconciler asks Temporal about it:
 * the API writes a run's row a moment before it hands the run to its agent's queue, and a run still
 * being queued must never be touched.
 */
export const RECONCILE_MIN_AGE_SECONDS = 5 * 60;
/** Longest operator's reason kept in a run's error. */
const MAX_REASON = 500;

/** What Temporal says of the execution that runs (or ran, or would run) a run. */
type Execution = { state: 'running' } | { state: 'closed'; status: string; reason: string } | { state: 'gone' };

/** What the reconciler did to a run (the `outcome` of agentsite_runs_reconciled_total). */
export type ReconcileOutcome = 'failed' | 'archived' | 'unavailable';

/**
 * The run reconciler: a Temporal Schedule starts runReconcileWorkflow every RECONCILE_INTERVAL, which
 * calls this in bounded batches. It finds runs whose execution ended (an operator's `temporal workflow
 * terminate` of the agent's queue, a timeout) or is gone without ending them or archiving them: a run
 * left queued or active is marked failed with what ended its execution (the operator's reason), and a
 * started run that has ended is archived from its history, through the run's own archive path
 * (RunArchiveService, RunsService.timeline); one whose history is gone is archived with an entry that
 * says so. Idempotent: every write is conditional (an end or an archive written by the run's own
 * step, even at the same moment, stands), and a run leaves the reconciler's index once archived.
 */
@Injectable()
export class RunReconcileService {
  private readonly logger = new Logger('RunReconcile');

  constructor(
    private readonly reconcile: RunReconcileRepository,
    private readonly runs: RunsRepository,
    private readonly reader: RunsService,
    private readonly archives: RunArchiveService,
    private readonly metrics: MetricsService,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** One schedule per task queue: stacks (and deployments) on one namespace never share it. */
  get scheduleId(): string {
    return workflowIds.runReconcile(this.settings.temporalTaskQueue);
  }

  /** Creates or updates the schedule, idempotently (each worker at its start, several at once included). */
  syncSchedule(): Promise<ScheduleSync> {
    return syncMaintenanceSchedule(this.client, this.scheduleId, {
      scheduleId: this.scheduleId,
      workflowType: 'runReconcileWorkflow',
      taskQueue: this.settings.temporalTaskQueue,
      spec: { intervals: [{ every: RECONCILE_INTERVAL }] },
      note: 'ends and archives runs whose Temporal execution ended without doing so (e.g. terminated by an operator)',
      catchupWindow: RECONCILE_CATCHUP_WINDOW,
    });
  }

  /** One batch, from `after`: the runs it looked at, those it ended or archived, and where to go on. */
  async reconcileBatch(after: ReconcileRunsCursor | null, limit = RECONCILE_BATCH): Promise<ReconcileRunsResult> {
    const candidates = await this.reconcile.candidates(after, RECONCILE_MIN_AGE_SECONDS, limit);
    // The runs of one agent's queue share its execution: Temporal is asked once per batch.
    const executions = new Map<string, Promise<Execution>>();
    const executionOf = (workflowId: string, runId: string | null): Promise<Execution> => {
      const key = `${workflowId}/${runId ?? ''}`;
      let found = executions.get(key);
      if (found === undefined) {
        found = this.describe(workflowId, runId);
        executions.set(key, found);
      }
      return found;
    };
    let reconciled = 0;
    for (const run of candidates) {
      const outcome = await this.reconcileRun(run, await executionOf(run.workflowId, run.temporalRunId));
      if (outcome !== null) {
        reconciled += 1;
        this.metrics.runsReconciled.inc({ outcome });
        this.logger.log(`run ${run.id} (${run.workflowId}): ${outcome}`);
      }
    }
    const last = candidates.at(-1);
    return {
      examined: candidates.length,
      reconciled,
      next:
        candidates.length === limit && last !== undefined
          ? { queuedAt: last.queuedAt.toISOString(), id: last.id }
          : null,
    };
  }

  private async reconcileRun(run: RunEntity, execution: Execution): Promise<ReconcileOutcome | null> {
    if (execution.state === 'running') {
      // A queued run of a queue that goes on is in it, unless the queue was replaced (terminated, then
      // started again by a later run) before it started.
      return run.status === 'queued' && (await this.lostFromQueue(run))
        ? this.end(run, { error: LOST_FROM_QUEUE, code: INTERNAL_FAILURE })
        : null;
    }
    if (run.status === 'queued' || run.status === 'active') {
      return this.end(run, endedBy(execution, run.status === 'queued'));
    }
    // Ended, started and not archived: its execution has closed (or is gone) without archiving it.
    return this.archive(run, execution);
  }

  /** Marks the run failed (unless it ended meanwhile), then archives it when it had started. */
  private async end(run: RunEntity, error: { error: string; code: string }): Promise<ReconcileOutcome | null> {
    const ended = await this.reconcile.markFailed(run.id, error);
    if (ended !== null) {
      this.metrics.runEnded(ended.triggeredBy, 'failed', ended.startedAt, ended.endedAt);
    }
    const now = await this.runs.findById(run.id);
    if (now === null || now.temporalRunId === null) {
      // Gone (agent deleted), or never started: no history to keep, its row tells it all.
      return ended !== null ? 'failed' : null;
    }
    const archived = await this.archive(now, await this.describe(now.workflowId, now.temporalRunId));
    return ended !== null ? (archived === 'unavailable' ? 'unavailable' : 'failed') : archived;
  }

  private async archive(run: RunEntity, execution: Execution): Promise<ReconcileOutcome | null> {
    if (execution.state === 'running') {
      return null; // its own step archives it
    }
    const written = await this.archives.archiveEnded(run);
    return written ? (execution.state === 'gone' ? 'unavailable' : 'archived') : null;
  }

  /** Whether the agent's running queue holds the run neither active nor queued (null: no answer now). */
  private async lostFromQueue(run: RunEntity): Promise<boolean> {
    const state = await this.reader.queueState(run.agentId).catch((err: unknown) => {
      this.logger.warn(`agent ${run.agentId}: queue state unavailable (${(err as Error).name}); run ${run.id} left`);
      return undefined;
    });
    if (state === undefined || state === null) {
      return false;
    }
    return state.activeRunId !== run.id && !state.queuedRunIds.includes(run.id);
  }

  /** The execution (`runId` null: the workflow's latest), with the operator's reason when terminated. */
  private async describe(workflowId: string, runId: string | null): Promise<Execution> {
    try {
      const described = await this.client.workflow.getHandle(workflowId, runId ?? undefined).describe();
      const status = described.status.name;
      if (status === 'RUNNING') {
        return { state: 'running' };
      }
      const reason = status === 'TERMINATED' ? await this.terminateReason(workflowId, described.runId) : '';
      return { state: 'closed', status, reason };
    } catch (err) {
      // Gone, or an id Temporal cannot read (a row whose run id is not one): never found, so treated as
      // gone rather than failing every batch.
      if (executionGone(err)) {
        return { state: 'gone' };
      }
      throw err;
    }
  }

  /** The reason given to `temporal workflow terminate`: the last event of the execution's history. */
  private async terminateReason(workflowId: string, runId: string): Promise<string> {
    const page = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: this.client.options.namespace,
      execution: { workflowId, runId },
      maximumPageSize: 1,
    });
    const reason = page.history?.events?.[0]?.workflowExecutionTerminatedEventAttributes?.reason ?? '';
    return reason.trim().slice(0, MAX_REASON);
  }
}

const LOST_FROM_QUEUE =
  "The run was lost before it started: its agent's queue was stopped and started again without it";

/** The run's error, in words, from how its execution ended. */
function endedBy(
  execution: Exclude<Execution, { state: 'running' }>,
  queued: boolean,
): { error: string; code: string } {
  const before = queued ? ' before it started' : '';
  if (execution.state === 'gone') {
    return {
      error: `The run's workflow is gone${before}: it ended without recording the run's end`,
      code: INTERNAL_FAILURE,
    };
  }
  switch (execution.status) {
    case 'TERMINATED':
      return {
        error: `Terminated by an operator${before}${execution.reason === '' ? '' : `: ${execution.reason}`}`,
        code: 'TERMINATED',
      };
    case 'TIMED_OUT':
      return { error: `The run's workflow timed out${before}`, code: 'TIMED_OUT' };
    default:
      return {
        error: `The run's workflow ended (${execution.status.toLowerCase().replace(/_/g, ' ')})${before} without recording the run's end`,
        code: INTERNAL_FAILURE,
      };
  }
}
