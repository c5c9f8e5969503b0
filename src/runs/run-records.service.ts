import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RunsPort } from '../../activities/index.js';
import { requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import type { SiteEntity } from '../vault/site.entity.js';
import type {
  DeleteExpiredRunsResult,
  ArchiveRunsInput,
  FinishRunInput,
  ReconcileRunsCursor,
  ReconcileRunsResult,
  RunContext,
  RunRequest,
  RunToolSet,
  RunTrigger,
  ScheduledTriggerResult,
} from '../../workflows/contracts.js';
import { triggerMessage, webhookAction } from '../../workflows/contracts.js';
import { RunArchiveService } from './run-archive.service.js';
import { RunReconcileService } from './run-reconcile.service.js';
import { RunRetentionService } from './run-retention.service.js';
import { agentPoliciesOf } from './run-context.js';
import { buildRunTools } from './run-tools.js';
import { RunToolSetsService } from './run-tool-sets.service.js';
import { RunExecutionRepository } from './run-execution.repository.js';
import { ScheduledRunsService, type TriggerCaller } from './scheduled-runs.service.js';

/** The activities' port for run records (the worker fills ActivityDeps.runs with it). */
@Injectable()
export class RunRecordsService implements RunsPort {
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly execution: RunExecutionRepository,
    private readonly scheduled: ScheduledRunsService,
    private readonly archives: RunArchiveService,
    private readonly retention: RunRetentionService,
    private readonly reconciler: RunReconcileService,
    private readonly metrics: MetricsService,
    private readonly toolSets: RunToolSetsService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * Marks the run active and prepares what the model needs. The request is the activity's input, so
   * not trusted: anything that can put a task on the queue could make one up. Only a run the API
   * queued moves: its row must exist with the request's agent and user, the workflow that asks must
   * be its agent's queue (`agent-<agentId>`), and it must be queued — or active for this very
   * execution (a retried turn 1). Anything else is PERMISSION_DENIED (non-retryable) and writes nothing. One round trip: the
   * update and the agent's query are one statement.
   */
  async startRun(
    request: RunRequest,
    execution: { workflowId: string; runId: string },
  ): Promise<{ context: RunContext; toolSet: RunToolSet; trigger: string }> {
    if (![request.runId, request.agentId, request.userId].every((id) => typeof id === 'string' && UUID.test(id))) {
      throw this.refusedStart(request, 'malformed ids');
    }
    const started = await this.execution.start(request, execution);
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
    const toolSet: RunToolSet = {
      // The webhook's action only where the API accepted one for this run: the payload's, in the row.
      system:
        (started.promptSource === 'webhook_action' ? webhookAction(started.trigger.payload) : null) ??
        agent.systemPrompt,
      tools: buildRunTools(
        agent.siteIds.map((id) => sites.find((s) => s.id === id)).filter((s): s is SiteEntity => s !== undefined),
      ),
    };
    // The run keeps the set it started with: stored by content, named on the run's row; the workflow
    // carries only its hash (a retried turn 1 names the set of the attempt that answers).
    const hash = await this.toolSets.attach(request.runId, toolSet);
    const context: RunContext = {
      model: agent.model ?? this.settings.defaultModel,
      toolSet: hash,
      // The policy the run started with holds for the whole run (a PATCH applies to later runs).
      ...agentPoliciesOf(agent),
    };
    return { context, toolSet, trigger: triggerMessage(started.trigger) };
  }

  /** A run's tool set by its hash (cached by this process; checked against the hash). */
  toolSet(hash: string): Promise<RunToolSet> {
    return this.toolSets.read(hash);
  }

  private refusedStart(request: RunRequest, why: string): AppError {
    // Ids only: enough for an operator to find the forged task in the Temporal UI.
    this.logger.warn(`run start refused for run ${String(request.runId)}, agent ${String(request.agentId)}: ${why}`);
    return new AppError('PERMISSION_DENIED', 'This run was not queued by the service');
  }

  /**
   * Records how a run ended. The input is not trusted (see startRun): only the workflow the run's row
   * names, and once the run has started only the execution that started it, may end it. Anything else
   * is PERMISSION_DENIED and changes nothing; a run that has ended already, or is gone, is left as it is.
   */
  async finishRun(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void> {
    if (typeof input.runId !== 'string' || !UUID.test(input.runId)) {
      throw this.refusedFinish(input, execution, 'malformed run id');
    }
    const { ended, bound } = await this.execution.finish(input, execution);
    if (bound === false) {
      throw this.refusedFinish(input, execution, 'the run is not this workflow execution’s');
    }
    if (ended !== null) {
      // Counted once: a retried finish, or one for a run ended already, changes no row.
      this.metrics.runEnded(ended.triggeredBy, input.status, ended.startedAt, ended.endedAt);
    }
  }

  private refusedFinish(input: FinishRunInput, execution: { workflowId: string }, why: string): AppError {
    this.logger.warn(
      `run finish refused for run ${String(input.runId)} asked by workflow ${execution.workflowId}: ${why}`,
    );
    return new AppError('PERMISSION_DENIED', 'Only the workflow that runs a run may end it');
  }

  archiveRun(input: FinishRunInput, execution: { workflowId: string; runId: string }): Promise<void> {
    return this.archives.archive(input, execution);
  }

  archiveRuns(input: ArchiveRunsInput, execution: { workflowId: string; runId: string }): Promise<void> {
    return this.archives.archiveAll(input, execution);
  }

  deleteExpiredRuns(): Promise<DeleteExpiredRunsResult> {
    return this.retention.deleteExpired();
  }

  reconcileRuns(after: ReconcileRunsCursor | null): Promise<ReconcileRunsResult> {
    return this.reconciler.reconcileBatch(after);
  }

  /** A firing of the agent's schedule (see ScheduledRunsService.enqueue; `caller` from Temporal). */
  enqueueScheduledRun(agentId: string, caller: TriggerCaller): Promise<ScheduledTriggerResult> {
    return this.scheduled.enqueue(agentId, caller);
  }

  /** The firing's run that the agent's queue skipped (see ScheduledRunsService.dropSkipped). */
  dropSkippedScheduledRun(agentId: string, runId: string, caller: TriggerCaller): Promise<void> {
    return this.scheduled.dropSkipped(agentId, runId, caller);
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
