import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Client } from '@temporalio/client';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { executionGone } from '../temporal/execution-gone.js';
import { type ScheduleSync, syncMaintenanceSchedule } from '../temporal/maintenance-schedule.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import { type DeleteExpiredRunsResult, workflowIds } from '../../workflows/contracts.js';
import { RunToolSetsService } from './run-tool-sets.service.js';
import { RunRetentionRepository } from './run-retention.repository.js';

/** Runs one clean-up activity deletes at most (each costs a Temporal call and its share of a DELETE). */
export const RETENTION_BATCH = 200;
/** Once a day, at a quiet hour (UTC); a firing missed while Temporal or the workers were down runs late. */
const RETENTION_CRON = '30 3 * * *';
const RETENTION_CATCHUP_WINDOW = '1 day';

/**
 * RUN_RETENTION_DAYS: ended runs older than that are deleted with their data (the row, the archived
 * timeline by cascade, and their Temporal execution if Temporal still keeps it) by a durable job: a
 * Temporal Schedule starting runRetentionWorkflow daily, which calls deleteExpiredRuns in batches.
 */
@Injectable()
export class RunRetentionService {
  private readonly logger = new Logger('RunRetention');

  constructor(
    private readonly runs: RunRetentionRepository,
    private readonly toolSets: RunToolSetsService,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** One schedule per task queue: stacks (and deployments) on one namespace never share it. */
  get scheduleId(): string {
    return workflowIds.runRetention(this.settings.temporalTaskQueue);
  }

  /**
   * Makes the schedule match the setting, idempotently (the worker calls it at every start, several
   * workers at once included): created or updated when RUN_RETENTION_DAYS is set, deleted when not.
   */
  async syncSchedule(): Promise<ScheduleSync> {
    const days = this.settings.runRetentionDays;
    return syncMaintenanceSchedule(
      this.client,
      this.scheduleId,
      days === undefined
        ? undefined
        : {
            scheduleId: this.scheduleId,
            workflowType: 'runRetentionWorkflow',
            taskQueue: this.settings.temporalTaskQueue,
            spec: { cronExpressions: [RETENTION_CRON] },
            // The days are the worker's setting, read by the activity; the note only tells operators.
            note: `deletes ended runs older than ${days} days (RUN_RETENTION_DAYS)`,
            catchupWindow: RETENTION_CATCHUP_WINDOW,
          },
    );
  }

  /**
   * One batch of the clean-up. The age comes from this worker's setting, never from the task's input
   * (anyone who can start a workflow could otherwise ask for every run). Temporal executions are
   * deleted before the rows, so a failure leaves the row to be found again by the next batch.
   */
  async deleteExpired(limit = RETENTION_BATCH): Promise<DeleteExpiredRunsResult> {
    const days = this.settings.runRetentionDays;
    if (days === undefined) {
      return { deleted: 0, more: false };
    }
    const expired = await this.runs.expiredRuns(days, limit);
    const gone: string[] = [];
    for (const run of expired) {
      if (await this.deleteExecution(run.workflow_id, run.temporal_run_id)) {
        gone.push(run.id);
      }
    }
    const deleted = gone.length === 0 ? 0 : await this.runs.deleteEnded(gone);
    // The tool sets no run names any more (their runs deleted here or before), as many as runs a batch.
    const sets = await this.toolSets.deleteOrphans(limit);
    if (deleted > 0 || sets > 0) {
      this.logger.log(`deleted ${deleted} runs older than ${days} days and ${sets} tool sets no run uses`);
    }
    // A run whose queue execution still goes on waits for the next clean-up (it closes within moments).
    return { deleted, more: (expired.length === limit && deleted > 0) || sets === limit };
  }

  /**
   * The execution of the agent's queue that ran a run (with the other runs it ran, whose archives keep
   * their timelines), deleted only once closed: false while it still goes on, so the run's row stays
   * until the next clean-up (a run never started has no execution).
   */
  private async deleteExecution(workflowId: string, temporalRunId: string | null): Promise<boolean> {
    if (temporalRunId === null) {
      return true;
    }
    try {
      const described = await this.client.workflow.getHandle(workflowId, temporalRunId).describe();
      if (described.status.name === 'RUNNING') {
        return false;
      }
      await this.client.workflowService.deleteWorkflowExecution({
        namespace: this.settings.temporalNamespace,
        workflowExecution: { workflowId, runId: temporalRunId },
      });
    } catch (err) {
      if (!executionGone(err)) {
        throw err;
      }
    }
    return true;
  }
}
