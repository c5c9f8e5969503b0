import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Client } from '@temporalio/client';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import {
  AGENT_HANDLERS,
  type RunRequest,
  type ScheduledTriggerResult,
  workflowIds,
} from '../../workflows/contracts.js';
import { agentQueueStart } from '../temporal/agent-queue-start.js';
import { RunEnqueueService } from './run-enqueue.service.js';
import { ScheduledRunsRepository } from './scheduled-runs.repository.js';

/** The workflow that asks: a firing of the agent's schedule, as Temporal names it to the activity. */
export interface TriggerCaller {
  workflowId: string;
  workflowType: string;
  /** The firing's execution (Temporal's run id). */
  runId: string;
}

/** Stale rows of the agent repaired when the firing finds it busy (one per dead API process at most). */
const UNSTARTED_REPAIR_LIMIT = 10;

/**
 * The runs of an agent's schedule. A firing writes its run's row and signals the agent's queue
 * workflow (signal-with-start): the signal is durable once the server has it, so the firing's activity
 * does not wait for a workflow task of the queue (an update would, holding an activity slot of the
 * worker for it, and with many agents due at once those waits queue up). The queue skips the request
 * if it finds the agent busy and tells the firing, which then drops the row (dropSkipped).
 */
@Injectable()
export class ScheduledRunsService {
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly rows: ScheduledRunsRepository,
    private readonly enqueuer: RunEnqueueService,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * A firing of the agent's schedule. The input is not trusted: the asking workflow (from Temporal)
   * must be the agent's scheduled trigger, `scheduled-<agentId>-<time of the firing>` of type
   * scheduledTriggerWorkflow, as the agent's Temporal Schedule starts it; anything else is
   * PERMISSION_DENIED and queues nothing. The run's id derives from the firing, so a retried activity
   * finds the row its first attempt wrote and sends the same request again (the queue keeps one).
   */
  async enqueue(agentId: string, caller: TriggerCaller): Promise<ScheduledTriggerResult> {
    this.requireTrigger(agentId, caller, 'queue a scheduled run');
    const runId = scheduledRunId(caller);
    let found = await this.rows.insert(agentId, runId);
    if (found.existing === null && found.insertedAt === null && this.due(found) && found.busy) {
      // A row a dead API process left queued would keep the agent busy for ever: repaired, then again.
      if ((await this.enqueuer.repairUnstartedRuns(UNSTARTED_REPAIR_LIMIT, agentId)).length > 0) {
        found = await this.rows.insert(agentId, runId);
      }
    }
    const { agent, existing, insertedAt } = found;
    if (agent === null || !agent.scheduled) {
      this.metrics.scheduledRunsSkipped.inc({ reason: 'not_scheduled' });
      return { skipped: 'the agent no longer exists or is no longer scheduled' };
    }
    if (existing !== null && existing.status !== 'queued') {
      // An earlier attempt's request got through and the run has started (or ended): nothing to send.
      return { runId };
    }
    const queuedAt = insertedAt ?? existing?.queuedAt;
    if (queuedAt === undefined) {
      const noCredits = agent.credits <= 0;
      this.metrics.scheduledRunsSkipped.inc({ reason: noCredits ? 'no_credits' : 'busy' });
      return noCredits ? { skipped: 'no credits' } : { skipped: 'the agent had a queued or active run' };
    }
    const request: RunRequest = {
      runId,
      agentId,
      userId: agent.userId,
      agentName: agent.name,
      triggeredBy: 'schedule',
      input: null,
      payload: null,
      actionOverride: null,
      deliveryId: null,
      mode: 'skip_if_busy',
      notifyWorkflowId: caller.workflowId,
      requestedAt: queuedAt.toISOString(),
    };
    try {
      await this.client.workflow.signalWithStart('agentQueueWorkflow', {
        ...agentQueueStart({ id: agentId, userId: agent.userId, name: agent.name }, this.settings),
        signal: AGENT_HANDLERS.enqueueRunSignal,
        signalArgs: [request],
      });
    } catch (err) {
      // Not queued, as far as this attempt knows: the activity's retry writes the row again and sends
      // the request again (the queue keeps one request of a run id).
      if (insertedAt !== null) {
        await this.rows.deleteIfQueued(agentId, runId).catch(() => undefined);
      }
      throw err;
    }
    if (insertedAt !== null) {
      this.metrics.runsQueued.inc({ trigger: 'schedule' });
    }
    return { runId };
  }

  /**
   * The firing's run, which the agent's queue skipped (it found a run queued or active): its row goes.
   * Only the firing whose run it is may drop it (the run id derives from the firing), and only while
   * it is queued; anything else is PERMISSION_DENIED.
   */
  async dropSkipped(agentId: string, runId: string, caller: TriggerCaller): Promise<void> {
    this.requireTrigger(agentId, caller, 'drop a scheduled run');
    if (runId !== scheduledRunId(caller)) {
      this.logger.warn(`scheduled run drop refused for run ${String(runId)} asked by workflow ${caller.workflowId}`);
      throw new AppError('PERMISSION_DENIED', 'Only the firing whose run it is may drop it');
    }
    if (await this.rows.deleteIfQueued(agentId, runId)) {
      // Counted queued when its row was written: the queue found the agent busy after all.
      this.metrics.scheduledRunsSkipped.inc({ reason: 'busy' });
    }
  }

  private due(found: { agent: { scheduled: boolean; credits: number } | null }): boolean {
    return found.agent !== null && found.agent.scheduled && found.agent.credits > 0;
  }

  private requireTrigger(agentId: string, caller: TriggerCaller, what: string): void {
    if (!isScheduledTriggerOf(agentId, caller)) {
      this.logger.warn(
        `scheduled run refused for agent ${String(agentId)} asked by workflow ${caller.workflowId} (${caller.workflowType}): not a firing of the agent's schedule`,
      );
      throw new AppError('PERMISSION_DENIED', `Only a firing of the agent's schedule may ${what}`);
    }
  }
}

/**
 * The id of a firing's run: a UUID (version 8, name-based) of the firing's workflow id and execution,
 * the same on every attempt of its activity.
 */
export function scheduledRunId(caller: Pick<TriggerCaller, 'workflowId' | 'runId'>): string {
  const hex = createHash('sha256').update(`${caller.workflowId}\n${caller.runId}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Whether `caller` is a workflow the agent's Temporal Schedule started: the schedule starts
 * `workflowIds.scheduledTrigger(agentId)` of type scheduledTriggerWorkflow, and Temporal appends the
 * firing's time to the id (`-2025-01-01T09:00:00Z`).
 */
export function isScheduledTriggerOf(agentId: unknown, caller: { workflowId: string; workflowType: string }): boolean {
  if (typeof agentId !== 'string' || !UUID.test(agentId) || caller.workflowType !== SCHEDULED_TRIGGER_WORKFLOW) {
    return false;
  }
  const prefix = `${workflowIds.scheduledTrigger(agentId)}-`;
  return caller.workflowId.startsWith(prefix) && FIRING_TIME.test(caller.workflowId.slice(prefix.length));
}

const SCHEDULED_TRIGGER_WORKFLOW = 'scheduledTriggerWorkflow';
/** RFC 3339 in UTC, as Temporal's scheduler appends it to the ids of the workflows it starts. */
const FIRING_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
