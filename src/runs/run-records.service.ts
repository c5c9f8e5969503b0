import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RunsPort } from '../../activities/index.js';
import { requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CreditsService } from '../credits/credits.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import type { SiteEntity } from '../vault/site.entity.js';
import type {
  DeleteExpiredRunsResult,
  FinishRunInput,
  RunContext,
  RunRequest,
  RunTrigger,
  ScheduledTriggerResult,
} from '../../workflows/contracts.js';
import { triggerMessage, webhookAction } from '../../workflows/contracts.js';
import { RunArchiveService } from './run-archive.service.js';
import { RunEnqueueService } from './run-enqueue.service.js';
import { RunRetentionService } from './run-retention.service.js';
import { RunSkippedError } from './run-skipped.error.js';
import { buildRunTools } from './run-tools.js';
import { RunsRepository } from './runs.repository.js';

/** The activities' port for run records (the worker fills ActivityDeps.runs with it). */
@Injectable()
export class RunRecordsService implements RunsPort {
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly runs: RunsRepository,
    private readonly enqueuer: RunEnqueueService,
    private readonly credits: CreditsService,
    private readonly archives: RunArchiveService,
    private readonly retention: RunRetentionService,
    private readonly metrics: MetricsService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * Marks the run active and prepares what the model needs. The request is the activity's input, so
   * not trusted: anything that can put a task on the queue could make one up. Only a run the API
   * queued moves: its row must exist with the request's agent and user, belong to the workflow that
   * asks (`run-<runId>`), and be queued — or active for this very execution (a retried turn 1).
   * Anything else is PERMISSION_DENIED (non-retryable) and writes nothing. One round trip: the
   * update and the agent's query are one statement.
   */
  async startRun(
    request: RunRequest,
    execution: { workflowId: string; runId: string },
  ): Promise<{ context: RunContext; trigger: string }> {
    if (![request.runId, request.agentId, request.userId].every((id) => typeof id === 'string' && UUID.test(id))) {
      throw this.refusedStart(request, 'malformed ids');
    }
    const started = await this.runs.start(request, execution);
    if (started === null) {
      throw this.refusedStart(request, 'no queued run of this agent and user for this workflow');
    }
    if (started.firstStart) {
      this.metrics.runStarted(started.triggeredBy);
    }
    const { agent, sites } = started;
    if (agent === null) {
      throw new AppError('AGENT_NOT_FOUND', 'The agent was deleted');
    }
    // The tier may have changed since the agent was saved (a downgrade, a lapsed payment): a schedule
    // or a webhook run that the tier no longer allows ends here (TIER_REQUIRED or SUBSCRIPTION_PAST_DUE
    // in its timeline), before the model is called.
    // The trigger as the API recorded it, not as the request says.
    requireTriggerTier(started.triggeredBy, started.tierOwner);
    if (started.ownerCredits <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const context: RunContext = {
      // The webhook's action only where the API accepted one for this run: the payload's, in the row.
      system:
        (started.promptSource === 'webhook_action' ? webhookAction(started.trigger.payload) : null) ??
        agent.systemPrompt,
      model: agent.model ?? this.settings.defaultModel,
      tools: buildRunTools(
        agent.siteIds.map((id) => sites.find((s) => s.id === id)).filter((s): s is SiteEntity => s !== undefined),
      ),
    };
    return { context, trigger: triggerMessage(started.trigger) };
  }

  private refusedStart(request: RunRequest, why: string): AppError {
    // Ids only: enough for an operator to find the forged task in the Temporal UI.
    this.logger.warn(`run start refused for run ${String(request.runId)}, agent ${String(request.agentId)}: ${why}`);
    return new AppError('PERMISSION_DENIED', 'This run was not queued by the service');
  }

  async finishRun(input: FinishRunInput): Promise<void> {
    const ended = await this.runs.finish(input);
    if (ended !== null) {
      // Counted once: a retried finish, or one for a run ended already, changes no row.
      this.metrics.runEnded(ended.triggeredBy, input.status, ended.startedAt, ended.endedAt);
    }
  }

  archiveRun(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void> {
    return this.archives.archive(input, execution);
  }

  deleteExpiredRuns(): Promise<DeleteExpiredRunsResult> {
    return this.retention.deleteExpired();
  }

  async enqueueScheduledRun(agentId: string, notifyWorkflowId: string): Promise<ScheduledTriggerResult> {
    const agent = await this.runs.findAgent(agentId);
    if (agent === null || agent.triggerType !== 'scheduled') {
      return { skipped: 'the agent no longer exists or is no longer scheduled' };
    }
    if ((await this.credits.balance(agent.userId)) <= 0) {
      return { skipped: 'no credits' };
    }
    try {
      const { run } = await this.enqueuer.enqueue(agent, {
        triggeredBy: 'schedule',
        mode: 'skip_if_busy',
        notifyWorkflowId,
      });
      return { runId: run.id };
    } catch (err) {
      if (err instanceof RunSkippedError) {
        return { skipped: 'the agent had a queued or active run' };
      }
      throw err;
    }
  }
}

/** What the trigger of a run needs of the tier, checked when the run starts (manual runs need nothing). */
export function requireTriggerTier(
  trigger: RunTrigger,
  tierOwner: { tier: Tier; subscriptionStatus: SubscriptionStatus },
): void {
  switch (trigger) {
    case 'schedule':
      requireFeature(tierOwner, (l) => l.scheduledAgents, 'Running on a schedule');
      return;
    case 'webhook':
      requireFeature(tierOwner, (l) => l.webhookAgents, 'Running from a webhook (harness tier or higher)');
      return;
    case 'manual':
      return;
  }
}
