import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import type { FinishRunInput } from '../../workflows/contracts.js';
import { RunsRepository } from './runs.repository.js';
import { ranByQueue, RunsService } from './runs.service.js';
import { terminalEntry } from './timeline.js';

/**
 * Keeps an ended run's timeline in PostgreSQL, so it outlives Temporal's retention: the agent's queue
 * calls this (local activity archiveRun) once a run has ended, before its next run, and a run of old
 * called it as its own last step; nothing depends on a poller. The timeline is read by the API's own
 * reader (RunsService.timeline): for a queue's run, its part of the history with its end from its
 * row; for a run of old, its history plus the closing entry the history does not hold yet.
 */
@Injectable()
export class RunArchiveService {
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly runs: RunsRepository,
    private readonly reader: RunsService,
  ) {}

  /**
   * `execution`: the workflow that asks (from Temporal, not the input). Only the workflow that ran the
   * run may archive it: its agent's queue (`agent-<agentId>`), or, for runs of old, the run's own
   * workflow `run-<runId>`. A run whose row
   * is gone (agent deleted) has nothing to keep.
   */
  async archive(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void> {
    if (typeof input.runId !== 'string' || !UUID.test(input.runId)) {
      this.refuse(input, execution);
    }
    const run = await this.runs.findById(input.runId);
    if (run === null) {
      return;
    }
    if (execution.workflowId !== run.workflowId) {
      this.refuse(input, execution);
    }
    const queued = ranByQueue(run);
    // Where the run begins in its execution's history, as the queue says (an integer, or the whole history).
    const from = Number.isSafeInteger(input.fromEventId) && input.fromEventId! > 0 ? input.fromEventId : undefined;
    const timeline = await this.reader.timeline(run, queued ? from : undefined);
    if (!queued) {
      timeline.push(
        terminalEntry(input, new Date().toISOString(), { workflowId: run.workflowId, runId: run.temporalRunId }),
      );
    }
    const saved = await this.runs.saveArchive({
      runId: run.id,
      workflowId: execution.workflowId,
      // The execution that ran it.
      temporalRunId: queued ? (run.temporalRunId ?? execution.runId) : execution.runId,
      timeline,
    });
    if (!saved) {
      // Not ended, or another execution's: logged with ids only, the run keeps its history as before.
      this.logger.warn(`run ${run.id}: not archived (status ${run.status}, execution ${execution.runId})`);
    }
  }

  private refuse(input: FinishRunInput, execution: { workflowId: string }): never {
    this.logger.warn(`archive refused for run ${String(input.runId)} asked by workflow ${execution.workflowId}`);
    throw new AppError('PERMISSION_DENIED', 'Only the workflow that ran a run may archive it');
  }
}
