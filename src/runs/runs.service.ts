import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { type Page, type PageQuery, pageOf } from '../common/pagination.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { executionGone } from '../temporal/execution-gone.js';
import { TEMPORAL_CLIENT, TEMPORAL_PAYLOAD_CODEC } from '../temporal/temporal.module.js';
import type { Scope } from '../workspaces/scope.js';
import {
  AGENT_HANDLERS,
  type AgentQueueState,
  type CancelRunResult,
  type RunFinalStatus,
  workflowIds,
} from '../../workflows/contracts.js';
import { type RunResponse, toRunResponse } from './run-response.js';
import type { RunEntity, RunStatus } from './run.entity.js';
import { type EndedRun, RunsRepository } from './runs.repository.js';
import { runTimelinesFromHistory, terminalEntry, type TimelineEntry } from './timeline.js';
import type { TriggeredEntryDto } from './dto/timeline-entry.dto.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const FINAL: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);
/** How long an ended run's read waits for its history to record the step that ended it. */
const CLOSE_WAIT_MS = 5_000;
const HISTORY_POLL_MS = 50;
/** Events a page of a history read from its end. */
const HISTORY_PAGE = 100;

/** An Update to a queue that is not running (the agent never ran, or was deleted) answers `fallback`. */
function ignoreNotFound<T>(fallback: T): (err: unknown) => T {
  return (err: unknown): T => {
    if (err instanceof WorkflowNotFoundError) {
      return fallback;
    }
    throw err;
  };
}

/**
 * What the row tells of a run Temporal has no history of: one still queued (or cancelled in the queue)
 * never started, and the execution that ran one may be gone (deleted by the run retention, or by
 * Temporal's own). Its trigger, and how it ended when the row knows (the final answer it does not).
 */
function timelineFromRow(run: RunEntity): TimelineEntry[] {
  const timeline: TimelineEntry[] = [triggeredOf(run)];
  if (run.endedAt !== null && (run.status === 'cancelled' || run.status === 'failed')) {
    timeline.push(endOf(run));
  }
  return timeline;
}

/** What a started run says once neither Temporal nor the archive has its steps. */
export const HISTORY_UNAVAILABLE =
  "This run's timeline is no longer available: Temporal no longer keeps its history, and no copy of it was archived";

/**
 * A started run whose execution Temporal no longer keeps, without an archive (it ended before it
 * could write one; see RunReconcileService): its row's trigger and end, and an entry that says the
 * steps between are gone, rather than a timeline that looks as if the run did nothing.
 */
export function timelineWithoutHistory(run: RunEntity): TimelineEntry[] {
  const [triggered, ...end] = timelineFromRow(run);
  const at = (run.startedAt ?? run.queuedAt).toISOString();
  return [triggered!, { at, type: 'history_unavailable', message: HISTORY_UNAVAILABLE }, ...end];
}

/** The `triggered` entry as the run's row tells it (when it was queued, by what, with what). */
function triggeredOf(run: RunEntity): TriggeredEntryDto {
  return {
    at: run.queuedAt.toISOString(),
    type: 'triggered',
    triggeredBy: run.triggeredBy,
    ...(run.triggeredBy === 'webhook' ? { payload: run.payload } : {}),
    ...(run.input ? { input: run.input } : {}),
    ...(run.systemPromptSource === 'webhook_action' ? { systemPromptSource: 'webhook_action' as const } : {}),
  };
}

/** How an ended run ended, as its row tells it (a completed run's answer is filled from its history). */
function endOf(run: RunEntity): TimelineEntry {
  const reference = { workflowId: run.workflowId, runId: run.temporalRunId };
  return terminalEntry(
    { status: run.status as RunFinalStatus, error: run.error ?? undefined },
    (run.endedAt ?? new Date()).toISOString(),
    reference,
  );
}

/** Runs as the API shows them (rows and timelines), their cancellation, and an agent's queue. */
@Injectable()
export class RunsService {
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly runs: RunsRepository,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(TEMPORAL_PAYLOAD_CODEC) private readonly codec: PayloadCodec,
    private readonly metrics: MetricsService,
  ) {}

  /** A run of an agent of the scope, or RUN_NOT_FOUND. */
  async findInScope(scope: Scope, runId: string): Promise<RunEntity> {
    const run = UUID.test(runId) ? await this.runs.findInScope(scope, runId) : null;
    if (run === null) {
      throw new AppError('RUN_NOT_FOUND', 'No run with this id');
    }
    return run;
  }

  /**
   * The run with its timeline: the archive its queue wrote (which outlives Temporal's retention), else
   * its part of its queue's history: a live run, or an ended one its queue has not archived yet (the
   * queue archives the runs an execution ran when it hands over; until then the execution is open and
   * Temporal keeps its history).
   */
  async describe(run: RunEntity): Promise<RunResponse> {
    const archived = FINAL.has(run.status) ? await this.runs.findArchive(run.id) : null;
    if (archived !== null) {
      return { ...toRunResponse(run), timeline: archived.timeline };
    }
    if (!FINAL.has(run.status) || run.startedAt === null) {
      return { ...toRunResponse(run), timeline: await this.timeline(run) };
    }
    // The row is written by the run's last step, a moment before its queue's history records that step
    // (a worker that died after writing the row retries the step first): wait for the history to close
    // the run's steps so status and timeline agree.
    const deadline = Date.now() + CLOSE_WAIT_MS;
    for (;;) {
      const [read] = await this.read([run]);
      if (!read!.open || Date.now() >= deadline) {
        return { ...toRunResponse(run), timeline: read!.timeline };
      }
      await new Promise((resolve) => setTimeout(resolve, HISTORY_POLL_MS));
    }
  }

  /** A completed run's answer (its timeline's end), archived or not yet; undefined for any other run. */
  async outputOf(runId: string): Promise<string | undefined> {
    const run = UUID.test(runId) ? await this.runs.findById(runId) : null;
    if (run === null || run.status !== 'completed') {
      return undefined;
    }
    const end = (await this.describe(run)).timeline?.at(-1);
    return end?.type === 'completed' ? end.output : undefined;
  }

  /**
   * The timeline from the history of the queue execution that ran the run (its part of it, from
   * `fromEventId` when given); a run still in the queue has only `triggered`. The one reader of run
   * histories: the API and the runs' archive both use it.
   */
  async timeline(run: RunEntity, fromEventId?: number): Promise<TimelineEntry[]> {
    const [read] = await this.read([run], fromEventId);
    return read!.timeline;
  }

  /**
   * The timelines of runs one execution ran (each started by it), from one read of its history from
   * `fromEventId` (the earliest run's start) on: the archive of an execution's runs after its hand-over.
   */
  async timelines(runs: RunEntity[], fromEventId?: number): Promise<TimelineEntry[][]> {
    return (await this.read(runs, fromEventId)).map((r) => r.timeline);
  }

  /** The runs' timelines, and whether each has a step its history has not closed; `runs` share an execution. */
  private async read(
    runs: RunEntity[],
    fromEventId?: number,
  ): Promise<Array<{ timeline: TimelineEntry[]; open: boolean }>> {
    const head = runs[0];
    if (head === undefined || head.temporalRunId === null) {
      // Not started: no execution has run it yet.
      return runs.map((run) => ({ timeline: timelineFromRow(run), open: false }));
    }
    const { workflowId, temporalRunId } = head;
    try {
      const events =
        fromEventId !== undefined
          ? await this.historySince(workflowId, temporalRunId, fromEventId)
          : ((await this.client.workflow.getHandle(workflowId, temporalRunId).fetchHistory()).events ?? []);
      return await runTimelinesFromHistory(
        events,
        this.codec,
        { workflowId, runId: temporalRunId },
        runs.map((run) => ({
          runId: run.id,
          triggered: triggeredOf(run),
          ...(FINAL.has(run.status) ? { ended: endOf(run) } : {}),
        })),
      );
    } catch (err) {
      if (executionGone(err)) {
        return runs.map((run) => ({ timeline: timelineWithoutHistory(run), open: false }));
      }
      throw err;
    }
  }

  /**
   * The events of an execution from `fromEventId` on, read from the end (a run's archive: its queue's
   * execution holds the runs before it, which need not travel from the server again).
   */
  private async historySince(workflowId: string, runId: string, fromEventId: number): Promise<HistoryEvent[]> {
    const events: HistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.client.options.namespace,
        execution: { workflowId, runId },
        maximumPageSize: HISTORY_PAGE,
        nextPageToken,
      });
      events.push(...(page.history?.events ?? []));
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken !== undefined && Number(events.at(-1)?.eventId ?? 0) > fromEventId);
    return events.filter((e) => Number(e.eventId ?? 0) >= fromEventId).reverse();
  }

  async listForAgent(agentId: string, query: PageQuery): Promise<Page<RunResponse>> {
    return pageOf(await this.runs.listForAgent(agentId, query), query.limit, toRunResponse);
  }

  /**
   * Cancels a queued run (taken out of the queue) or the active one (its scope cancelled in the
   * queue's execution). Either Update answers once the queue has let go of the run.
   */
  async cancel(run: RunEntity): Promise<RunResponse> {
    if (FINAL.has(run.status)) {
      throw new AppError('RUN_NOT_CANCELLABLE', `The run is already ${run.status}`);
    }
    const agentHandle = this.client.workflow.getHandle(workflowIds.agent(run.agentId));
    const removed = await agentHandle
      .executeUpdate<boolean, [string]>(AGENT_HANDLERS.cancelQueuedRun, { args: [run.id] })
      .catch(ignoreNotFound(false));
    if (removed) {
      // Never started, so its workflow will not record the end: counted here.
      this.countCancelled(await this.runs.markCancelled(run.id));
    } else {
      // The active run records its own end; the Update answers once it has.
      await agentHandle
        .executeUpdate<CancelRunResult, [string]>(AGENT_HANDLERS.cancelRun, { args: [run.id] })
        .catch(ignoreNotFound('unknown'));
    }
    const after = await this.runs.findByIdOrFail(run.id);
    if (after.status !== 'cancelled' && FINAL.has(after.status)) {
      throw new AppError('RUN_NOT_CANCELLABLE', `The run ended as ${after.status} before it could be cancelled`);
    }
    return toRunResponse(after);
  }

  private countCancelled(ended: EndedRun | null): void {
    if (ended !== null) {
      this.metrics.runEnded(ended.triggeredBy, 'cancelled', ended.startedAt, ended.endedAt);
    }
  }

  async queueState(agentId: string): Promise<AgentQueueState | null> {
    try {
      return await this.client.workflow
        .getHandle(workflowIds.agent(agentId))
        .query<AgentQueueState>(AGENT_HANDLERS.agentState);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        return null;
      }
      throw err;
    }
  }

  /**
   * Before an agent is deleted: its queue is dropped and its active run cancelled. No Query first: a
   * query needs a worker to answer it, and with the workers busy (a burst of runs) it timed out and
   * the deletion answered 500. Terminating a queue that is not running is a no-op.
   */
  async stopAgent(agentId: string): Promise<void> {
    const handle = this.client.workflow.getHandle(workflowIds.agent(agentId));
    // Terminating the queue ends the run it executes (whose end the row records below).
    const stopped = await handle.terminate('agent deleted').then(
      () => true,
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) {
          return false;
        }
        throw err;
      },
    );
    const cancelled = await this.runs.cancelUnendedOfAgent(agentId);
    for (const ended of cancelled) {
      this.countCancelled(ended);
    }
    if (stopped || cancelled.length > 0) {
      this.logger.log(`agent ${agentId}: queue stopped (${cancelled.length} runs not yet ended cancelled)`);
    }
  }
}
