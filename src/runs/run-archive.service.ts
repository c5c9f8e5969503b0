import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { type FinishRunInput, workflowIds } from '../../workflows/contracts.js';
import { RunsRepository } from './runs.repository.js';
import { RunsService } from './runs.service.js';
import { terminalEntry } from './timeline.js';

/**
 * Keeps an ended run's timeline in PostgreSQL: the run's workflow calls this (activity archiveRun)
 * as its last step, once its outcome is known, so nothing depends on a poller and the timeline
 * outlives Temporal's retention. The timeline is read from the run's history by the API's own
 * reader (RunsService.timeline), plus the closing entry the history does not hold yet.
 */
@Injectable()
export class RunArchiveService {
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly runs: RunsRepository,
    private readonly reader: RunsService,
  ) {}

  /**
   * `execution`: the workflow that asks (from Temporal, not the input). Only a run's own workflow
   * `run-<runId>` may archive it; a run whose row is gone (agent deleted) has nothing to keep.
   */
  async archive(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void> {
    if (
      typeof input.runId !== 'string' ||
      !UUID.test(input.runId) ||
      execution.workflowId !== workflowIds.run(input.runId)
    ) {
      this.logger.warn(`archive refused for run ${String(input.runId)} asked by workflow ${execution.workflowId}`);
      throw new AppError('PERMISSION_DENIED', 'Only a run its own workflow may archive');
    }
    const run = await this.runs.findById(input.runId);
    if (run === null) {
      return;
    }
    const timeline = await this.reader.timeline(run);
    timeline.push(
      terminalEntry(input, new Date().toISOString(), { workflowId: run.workflowId, runId: run.temporalRunId }),
    );
    const saved = await this.runs.saveArchive({
      runId: run.id,
      workflowId: execution.workflowId,
      temporalRunId: execution.runId,
      timeline,
    });
    if (!saved) {
      // Not ended, or another execution's: logged with ids only, the run keeps its history as before.
      this.logger.warn(`run ${run.id}: not archived (status ${run.status}, execution ${execution.runId})`);
    }
  }
}
