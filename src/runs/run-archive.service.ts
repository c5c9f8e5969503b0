import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import type { ArchiveRunsInput, FinishRunInput } from '../../workflows/contracts.js';
import type { RunEntity } from './run.entity.js';
import { RunsRepository } from './runs.repository.js';
import { RunsService } from './runs.service.js';

/**
 * Keeps an ended run's timeline in PostgreSQL, so it outlives Temporal's retention: the agent's queue
 * calls this (activity archiveRuns) for the runs an execution ran, from the next execution as it begins
 * (older executions: at their own hand-over, or archiveRun once each run has ended); nothing depends on
 * a poller. The timeline is read by the API's own reader (RunsService.timeline): the run's part of its
 * queue's history, with its end from its row.
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
   * run, its agent's queue (`agent-<agentId>`), may archive it. A run whose row is gone (agent
   * deleted) has nothing to keep.
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
    // Where the run begins in its execution's history, as the queue says (an integer, or the whole history).
    const from = Number.isSafeInteger(input.fromEventId) && input.fromEventId! > 0 ? input.fromEventId : undefined;
    const timeline = await this.reader.timeline(run, from);
    const saved = await this.runs.saveArchive({
      runId: run.id,
      workflowId: execution.workflowId,
      // The execution that ran it.
      temporalRunId: run.temporalRunId ?? execution.runId,
      timeline,
    });
    if (!saved) {
      // Not ended, or another execution's: logged with ids only, the run keeps its history as before.
      this.logger.warn(`run ${run.id}: not archived (status ${run.status}, execution ${execution.runId})`);
    }
  }

  /**
   * The runs one execution ran (`execution.runId`), once it has handed over or as it does: its history
   * read once (from the earliest run's start), each run's write conditional as archive's. Runs whose
   * row is gone (agent deleted, run retention) are skipped; the request is refused whole if one is not
   * the asking workflow's.
   */
  async archiveAll(input: ArchiveRunsInput, execution: { workflowId: string; runId: string }): Promise<void> {
    const runs: RunEntity[] = [];
    const froms: Array<number | undefined> = [];
    for (const ended of Array.isArray(input.runs) ? input.runs : []) {
      if (typeof ended?.runId !== 'string' || !UUID.test(ended.runId)) {
        this.refuse(ended ?? {}, execution);
      }
      const run = await this.runs.findById(ended.runId);
      if (run === null) {
        continue;
      }
      if (execution.workflowId !== run.workflowId) {
        this.refuse(ended, execution);
      }
      if (run.temporalRunId !== execution.runId) {
        // Not started by this execution (never so for a run it ran): left to the run reconciler.
        this.logger.warn(`run ${run.id}: not archived (started by execution ${String(run.temporalRunId)})`);
        continue;
      }
      runs.push(run);
      froms.push(Number.isSafeInteger(ended.fromEventId) && ended.fromEventId > 0 ? ended.fromEventId : undefined);
    }
    if (runs.length === 0) {
      return;
    }
    const from = froms.includes(undefined) ? undefined : Math.min(...(froms as number[]));
    const timelines = await this.reader.timelines(runs, from);
    for (const [i, run] of runs.entries()) {
      const saved = await this.runs.saveArchive({
        runId: run.id,
        workflowId: execution.workflowId,
        temporalRunId: execution.runId,
        timeline: timelines[i]!,
      });
      if (!saved) {
        this.logger.warn(`run ${run.id}: not archived (status ${run.status}, execution ${execution.runId})`);
      }
    }
  }

  /**
   * The run reconciler's archive of an ended run whose execution closed (or is gone) without archiving
   * it: the same reader and write as the run's own step, over the whole execution's history (the
   * reader picks the run's part), an archive written already kept as it is. False when none was
   * written (one existed, or the run is gone).
   */
  async archiveEnded(run: RunEntity): Promise<boolean> {
    const timeline = await this.reader.timeline(run);
    return this.runs.saveArchive(
      { runId: run.id, workflowId: run.workflowId, temporalRunId: run.temporalRunId ?? '', timeline },
      true,
    );
  }

  private refuse(input: { runId?: unknown }, execution: { workflowId: string }): never {
    this.logger.warn(`archive refused for run ${String(input.runId)} asked by workflow ${execution.workflowId}`);
    throw new AppError('PERMISSION_DENIED', 'Only the workflow that ran a run may archive it');
  }
}
