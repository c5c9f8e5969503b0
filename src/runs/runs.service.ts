import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type Client,
  type Workflow,
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { In, type DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { AgentEntity } from '../agents/agent.entity.js';
import { requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import type { SubscriptionStatus, Tier } from '../users/user.entity.js';
import { type Page, type PageQuery, keysetWhere, pageOf } from '../common/pagination.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CreditsService } from '../credits/credits.service.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import { SiteEntity } from '../vault/site.entity.js';
import { inOwnersVaultSql, type Scope, scopeWhere } from '../workspaces/scope.js';
import {
  AGENT_HANDLERS,
  type AgentQueueState,
  type EnqueueMode,
  type EnqueueResult,
  FAILURE,
  type FinishRunInput,
  type RunContext,
  type RunRequest,
  type RunTrigger,
  type ScheduledTriggerResult,
  SEARCH_ATTRIBUTES,
  workflowIds,
} from '../../workflows/contracts.js';
import { buildRunTools } from './run-tools.js';
import { RunEntity, type RunStatus } from './run.entity.js';
import { type TimelineEntry, timelineFromHistory } from './timeline.js';
import { UUID } from '../common/ids.js';
import { RowMapper } from '../common/database/row-mapper.js';

export interface RunResponse {
  id: string;
  agentId: string;
  status: RunStatus;
  triggeredBy: RunTrigger;
  payload: unknown;
  input: string | null;
  systemPromptSource: 'agent' | 'webhook_action';
  queuedAt: string;
  startedAt: string | null;
  endedAt: string | null;
  error: { error: string; code: string } | null;
  usage: { inputTokens: number; outputTokens: number; credits: number };
  temporal: { workflowId: string; runId: string | null };
  timeline?: TimelineEntry[];
}

export interface EnqueueOptions {
  triggeredBy: RunTrigger;
  mode: EnqueueMode;
  input?: string | null;
  payload?: unknown;
  actionOverride?: string | null;
  deliveryId?: string | null;
  notifyWorkflowId?: string;
}

export interface Enqueued {
  run: RunResponse;
  queuePosition: number;
  duplicate: boolean;
}

const FINAL: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);
const CANCEL_WAIT_MS = 10_000;
const CLOSE_WAIT_MS = 5_000;
const TERMINAL_ENTRIES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export function toRunResponse(run: RunEntity): RunResponse {
  return {
    id: run.id,
    agentId: run.agentId,
    status: run.status,
    triggeredBy: run.triggeredBy,
    payload: run.payload ?? null,
    input: run.input,
    systemPromptSource: run.systemPromptSource,
    queuedAt: run.queuedAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    endedAt: run.endedAt?.toISOString() ?? null,
    error: run.error,
    usage: run.usage,
    temporal: { workflowId: run.workflowId, runId: run.temporalRunId },
  };
}

/** The cause of a refused Update: the ApplicationFailure our validator threw. */
function updateFailureType(err: unknown): string | undefined {
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    return err.cause.type ?? undefined;
  }
  return undefined;
}

/** Runs: handing them to the agent's queue workflow, their index rows, and their timelines. */
/** SQL: how many runs of the agent are queued or active ahead of the run (queued_at, id) — its queue position. */
function runsAhead(agentId: string, queuedAt: string, runId: string): string {
  return (
    `(SELECT count(*)::int FROM runs r WHERE r.agent_id = ${agentId} AND r.status IN ('queued', 'active') ` +
    `AND (r.queued_at, r.id) < (${queuedAt}, ${runId}))`
  );
}

@Injectable()
export class RunsService {
  private readonly logger = new Logger('Runs');

  private readonly agentRows: RowMapper<AgentEntity>;
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly startQuery: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly credits: CreditsService,
  ) {
    this.agentRows = new RowMapper(dataSource, AgentEntity, 'a');
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    // The run's start ($2: the run, $3: its user, $4/$5: the asking workflow and execution) and, in
    // the same statement, the agent, its owner's balance, the tier owner's tier and the agent's sites
    // (in its own scope): a row per site, or one row with no site; no agent row when it was deleted.
    // The tier that counts is the workspace owner's for a workspace agent, else the agent owner's.
    this.startQuery =
      "WITH started AS (UPDATE runs SET status = 'active', temporal_run_id = $5, " +
      'started_at = COALESCE(started_at, now()) ' +
      'WHERE id = $2 AND agent_id = $1 AND user_id = $3 AND workflow_id = $4 ' +
      "AND (status = 'queued' OR (status = 'active' AND temporal_run_id = $5)) RETURNING triggered_by, system_prompt_source) " +
      'SELECT st.triggered_by AS run_triggered_by, st.system_prompt_source AS run_prompt_source, ' +
      `${this.agentRows.select()}, ${this.siteRows.select()}, ` +
      'u.credits AS owner_credits, t.tier AS tier_owner_tier, t.subscription_status AS tier_owner_status ' +
      'FROM (SELECT 1) one LEFT JOIN started st ON true LEFT JOIN (agents a JOIN users u ON u.id = a.user_id LEFT JOIN workspaces w ON w.id = a.workspace_id ' +
      'JOIN users t ON t.id = COALESCE(w.owner_id, a.user_id)) ON a.id = $1 ' +
      `LEFT JOIN sites s ON s.id = ANY(a.site_ids) AND ${inOwnersVaultSql('s', 'a')}`;
  }

  private get runs() {
    return this.dataSource.getRepository(RunEntity);
  }

  /**
   * Hands a run to the agent's queue workflow with update-with-start: once this returns, the run is
   * in Temporal's history (durable), whatever happens to this process next.
   */
  async enqueue(agent: AgentEntity, options: EnqueueOptions): Promise<Enqueued> {
    if (options.deliveryId) {
      const existing = await this.runs.findOneBy({ agentId: agent.id, deliveryId: options.deliveryId });
      if (existing !== null) {
        return { run: toRunResponse(existing), queuePosition: 0, duplicate: true };
      }
    }
    const request: RunRequest = {
      runId: randomUUID(),
      agentId: agent.id,
      userId: agent.userId,
      agentName: agent.name,
      triggeredBy: options.triggeredBy,
      input: options.input ?? null,
      payload: options.payload ?? null,
      actionOverride: options.actionOverride ?? null,
      deliveryId: options.deliveryId ?? null,
      mode: options.mode,
      notifyWorkflowId: options.notifyWorkflowId,
      requestedAt: new Date().toISOString(),
    };
    // The row first: the worker starts only runs whose row the API wrote (startRun), and the run may
    // start as soon as the update is accepted.
    const row = this.queuedRow(request);
    await this.runs
      .createQueryBuilder()
      .insert()
      .values(row as QueryDeepPartialEntity<RunEntity>)
      .orIgnore()
      .execute();
    let result: EnqueueResult;
    try {
      result = await this.client.workflow.executeUpdateWithStart<Workflow, EnqueueResult, [RunRequest]>(
        AGENT_HANDLERS.enqueueRun,
        {
          args: [request],
          updateId: request.deliveryId ? `delivery-${request.deliveryId}` : `run-${request.runId}`,
          startWorkflowOperation: new WithStartWorkflowOperation('agentWorkflow', {
            workflowId: workflowIds.agent(agent.id),
            taskQueue: this.settings.temporalTaskQueue,
            args: [{ agentId: agent.id }],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            typedSearchAttributes: [
              { key: SEARCH_ATTRIBUTES.agentId, value: agent.id },
              { key: SEARCH_ATTRIBUTES.userId, value: agent.userId },
            ],
            memo: { agentName: agent.name },
            staticSummary: `Run queue of agent ${agent.name}`,
          }),
        },
      );
    } catch (err) {
      // Not queued (refused, or unknown): leave no row that would look queued forever. Only a row
      // still queued goes; if the update did get through and the run has started, it stays.
      await this.runs.delete({ id: request.runId, status: 'queued' }).catch(() => undefined);
      switch (updateFailureType(err)) {
        case FAILURE.agentAlreadyRunning:
          throw new AppError('AGENT_ALREADY_RUNNING', 'The agent already has a queued or active run');
        case FAILURE.runSkipped:
          throw new RunSkipped();
        default:
          throw err;
      }
    }
    if (result.duplicate && result.runId !== request.runId) {
      // A repeated delivery: the first delivery's run stands for it, this row was never queued.
      await this.runs.delete({ id: request.runId, status: 'queued' });
      request.runId = result.runId;
    }
    const stored = (await this.runs.findOneBy({ id: request.runId })) ?? row;
    return { run: toRunResponse(stored), queuePosition: result.queuePosition, duplicate: result.duplicate };
  }

  /**
   * A webhook's run: its row first (the unique delivery id settles concurrent duplicates), then a
   * signal-with-start to the agent's queue workflow. A signal is durable once the server accepts it,
   * so the 202 needs no round trip through a worker. A repeated delivery re-sends the first run's
   * request (the workflow ignores it if it has it), so a first attempt that died half-way still runs.
   */
  async enqueueWebhook(agent: AgentEntity, options: Omit<EnqueueOptions, 'mode' | 'triggeredBy'>): Promise<Enqueued> {
    const request: RunRequest = {
      runId: randomUUID(),
      agentId: agent.id,
      userId: agent.userId,
      agentName: agent.name,
      triggeredBy: 'webhook',
      input: null,
      payload: options.payload ?? null,
      actionOverride: options.actionOverride ?? null,
      deliveryId: options.deliveryId ?? null,
      mode: 'queue',
      requestedAt: new Date().toISOString(),
    };
    // One statement writes the row and counts the runs ahead of it (RETURNING sees the rows committed
    // before it); a repeated delivery id inserts nothing and returns no row.
    let run = this.queuedRow(request);
    const inserted: Array<{ ahead: number }> = await this.dataSource.query(
      `INSERT INTO runs (id, agent_id, user_id, status, triggered_by, payload, input, system_prompt_source,
         delivery_id, workflow_id, usage, queued_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11::jsonb, $12)
       ON CONFLICT DO NOTHING
       RETURNING ${runsAhead('$2', '$12', '$1')} AS ahead`,
      [
        run.id,
        run.agentId,
        run.userId,
        run.status,
        run.triggeredBy,
        JSON.stringify(run.payload),
        run.input,
        run.systemPromptSource,
        run.deliveryId,
        run.workflowId,
        JSON.stringify(run.usage),
        run.queuedAt,
      ],
    );
    const duplicate = inserted.length === 0;
    let queuePosition = inserted[0]?.ahead ?? 0;
    if (duplicate) {
      // The first delivery's run and request are sent again (see above).
      run = await this.runs.findOneByOrFail({ agentId: agent.id, deliveryId: request.deliveryId! });
      request.runId = run.id;
      request.requestedAt = run.queuedAt.toISOString();
      request.payload = run.payload;
      const ahead: Array<{ n: number }> = await this.dataSource.query(`SELECT ${runsAhead('$1', '$2', '$3')} AS n`, [
        agent.id,
        run.queuedAt,
        run.id,
      ]);
      queuePosition = ahead[0]?.n ?? 0;
    }
    try {
      await this.client.workflow.signalWithStart('agentWorkflow', {
        workflowId: workflowIds.agent(agent.id),
        taskQueue: this.settings.temporalTaskQueue,
        args: [{ agentId: agent.id }],
        signal: AGENT_HANDLERS.enqueueRunSignal,
        signalArgs: [request],
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.agentId, value: agent.id },
          { key: SEARCH_ATTRIBUTES.userId, value: agent.userId },
        ],
        memo: { agentName: agent.name },
        staticSummary: `Run queue of agent ${agent.name}`,
      });
    } catch (err) {
      if (!duplicate) {
        // Not queued: leave no row that would look queued forever (a retried delivery starts afresh).
        await this.runs.delete({ id: request.runId, status: 'queued' }).catch(() => undefined);
      }
      throw err;
    }
    return { run: toRunResponse(run), queuePosition, duplicate };
  }

  private queuedRow(request: RunRequest): RunEntity {
    return this.runs.create({
      id: request.runId,
      agentId: request.agentId,
      userId: request.userId,
      status: 'queued',
      triggeredBy: request.triggeredBy,
      payload: request.payload,
      input: request.input,
      systemPromptSource: request.actionOverride ? 'webhook_action' : 'agent',
      deliveryId: request.deliveryId,
      workflowId: workflowIds.run(request.runId),
      temporalRunId: null,
      error: null,
      usage: { inputTokens: 0, outputTokens: 0, credits: 0 },
      queuedAt: new Date(request.requestedAt),
    });
  }

  // ---- the ports of the activities ----

  /**
   * Marks the run active and prepares what the model needs. The request is the activity's input, so
   * not trusted: anything that can put a task on the queue could make one up. Only a run the API
   * queued moves: its row must exist with the request's agent and user, belong to the workflow that
   * asks (`run-<runId>`), and be queued — or active for this very execution (a retried turn 1).
   * Anything else is PERMISSION_DENIED (non-retryable) and writes nothing. One round trip: the
   * update and the agent's query are one statement.
   */
  async startRun(request: RunRequest, execution: { workflowId: string; runId: string }): Promise<RunContext> {
    if (![request.runId, request.agentId, request.userId].every((id) => typeof id === 'string' && UUID.test(id))) {
      throw this.refusedStart(request, 'malformed ids');
    }
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(this.startQuery, [
      request.agentId,
      request.runId,
      request.userId,
      execution.workflowId,
      execution.runId,
    ]);
    const started = rows[0];
    if (started?.run_triggered_by === null || started?.run_triggered_by === undefined) {
      throw this.refusedStart(request, 'no queued run of this agent and user for this workflow');
    }
    const agent = this.agentRows.from(started);
    if (agent === null) {
      throw new AppError('AGENT_NOT_FOUND', 'The agent was deleted');
    }
    // The tier may have changed since the agent was saved (a downgrade, a lapsed payment): a schedule
    // or a webhook run that the tier no longer allows ends here (TIER_REQUIRED or SUBSCRIPTION_PAST_DUE
    // in its timeline), before the model is called.
    // The trigger as the API recorded it, not as the request says.
    requireTriggerTier(started.run_triggered_by as RunTrigger, {
      tier: started.tier_owner_tier as Tier,
      subscriptionStatus: started.tier_owner_status as SubscriptionStatus,
    });
    if (Number(started.owner_credits) <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const sites = rows.map((row) => this.siteRows.from(row)).filter((site): site is SiteEntity => site !== null);
    return {
      // The webhook's action only where the API accepted one for this run.
      system:
        started.run_prompt_source === 'webhook_action' && request.actionOverride
          ? request.actionOverride
          : agent.systemPrompt,
      model: agent.model ?? this.settings.defaultModel,
      tools: buildRunTools(
        agent.siteIds.map((id) => sites.find((s) => s.id === id)).filter((s): s is SiteEntity => s !== undefined),
      ),
    };
  }

  private refusedStart(request: RunRequest, why: string): AppError {
    // Ids only: enough for an operator to find the forged task in the Temporal UI.
    this.logger.warn(`run start refused for run ${String(request.runId)}, agent ${String(request.agentId)}: ${why}`);
    return new AppError('PERMISSION_DENIED', 'This run was not queued by the service');
  }

  async finishRun(input: FinishRunInput): Promise<void> {
    await this.runs.update(
      { id: input.runId },
      { status: input.status, endedAt: new Date(), error: input.error ?? null },
    );
  }

  async enqueueScheduledRun(agentId: string, notifyWorkflowId: string): Promise<ScheduledTriggerResult> {
    const agent = await this.dataSource.getRepository(AgentEntity).findOneBy({ id: agentId });
    if (agent === null || agent.triggerType !== 'scheduled') {
      return { skipped: 'the agent no longer exists or is no longer scheduled' };
    }
    if ((await this.credits.balance(agent.userId)) <= 0) {
      return { skipped: 'no credits' };
    }
    try {
      const { run } = await this.enqueue(agent, { triggeredBy: 'schedule', mode: 'skip_if_busy', notifyWorkflowId });
      return { runId: run.id };
    } catch (err) {
      if (err instanceof RunSkipped) {
        return { skipped: 'the agent had a queued or active run' };
      }
      throw err;
    }
  }

  // ---- reading and cancelling ----

  /** A run of an agent of the scope, or RUN_NOT_FOUND. */
  async findInScope(scope: Scope, runId: string): Promise<RunEntity> {
    const run = UUID.test(runId) ? await this.runs.findOneBy({ id: runId }) : null;
    const agent =
      run === null
        ? null
        : await this.dataSource.getRepository(AgentEntity).findOneBy({ id: run.agentId, ...scopeWhere(scope) });
    if (run === null || agent === null) {
      throw new AppError('RUN_NOT_FOUND', 'No run with this id');
    }
    return run;
  }

  async describe(run: RunEntity): Promise<RunResponse> {
    let timeline = await this.timeline(run);
    if (FINAL.has(run.status) && !timeline.some((e) => TERMINAL_ENTRIES.has(e.type)) && run.startedAt !== null) {
      // The row is written by the run's last activity, a moment before its workflow closes:
      // wait for the close so status and timeline agree.
      const handle = this.client.workflow.getHandle(run.workflowId);
      await Promise.race([
        handle.result().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS)),
      ]);
      timeline = await this.timeline(run);
    }
    return { ...toRunResponse(run), timeline };
  }

  /** The timeline from the run's workflow history; a run still in the queue has only `triggered`. */
  async timeline(run: RunEntity): Promise<TimelineEntry[]> {
    try {
      const history = await this.client.workflow.getHandle(run.workflowId).fetchHistory();
      return timelineFromHistory(history.events ?? [], { workflowId: run.workflowId, runId: run.temporalRunId });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        return [
          {
            at: run.queuedAt.toISOString(),
            type: 'triggered',
            triggeredBy: run.triggeredBy,
            ...(run.triggeredBy === 'webhook' ? { payload: run.payload } : {}),
          },
          ...(run.status === 'cancelled' && run.endedAt ? [{ at: run.endedAt.toISOString(), type: 'cancelled' }] : []),
        ];
      }
      throw err;
    }
  }

  async listForAgent(agentId: string, query: PageQuery): Promise<Page<RunResponse>> {
    const qb = this.runs
      .createQueryBuilder('r')
      .where('r.agent_id = :agentId', { agentId })
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC');
    keysetWhere(qb, 'r', query.cursor, 'DESC');
    return pageOf(await qb.take(query.limit + 1).getMany(), query.limit, toRunResponse);
  }

  /** Cancels a queued run (taken out of the queue) or an active one (Temporal cancellation). */
  async cancel(run: RunEntity): Promise<RunResponse> {
    if (FINAL.has(run.status)) {
      throw new AppError('RUN_NOT_CANCELLABLE', `The run is already ${run.status}`);
    }
    const agentHandle = this.client.workflow.getHandle(workflowIds.agent(run.agentId));
    const removed = await agentHandle
      .executeUpdate<boolean, [string]>(AGENT_HANDLERS.cancelQueuedRun, { args: [run.id] })
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) {
          return false;
        }
        throw err;
      });
    if (removed) {
      await this.runs.update(
        { id: run.id, status: In(['queued', 'active']) },
        { status: 'cancelled', endedAt: new Date() },
      );
    } else {
      const handle = this.client.workflow.getHandle(run.workflowId);
      try {
        await handle.cancel();
        // The run records `cancelled` itself; wait briefly so the answer shows it.
        await Promise.race([
          handle.result().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, CANCEL_WAIT_MS)),
        ]);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) {
          throw err;
        }
      }
    }
    await this.waitUntilReleased(run);
    const after = await this.runs.findOneByOrFail({ id: run.id });
    if (after.status !== 'cancelled' && FINAL.has(after.status)) {
      throw new AppError('RUN_NOT_CANCELLABLE', `The run ended as ${after.status} before it could be cancelled`);
    }
    return toRunResponse(after);
  }

  /** After a cancel, until the agent's queue has let go of the run (so the agent can be started again). */
  private async waitUntilReleased(run: RunEntity): Promise<void> {
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (Date.now() < deadline) {
      const state = await this.queueState(run.agentId);
      if (state === null || (state.activeRunId !== run.id && !state.queuedRunIds.includes(run.id))) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
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

  /** Before an agent is deleted: its queue is dropped and its active run cancelled. */
  async stopAgent(agentId: string): Promise<void> {
    const state = await this.queueState(agentId);
    if (state === null) {
      return;
    }
    const handle = this.client.workflow.getHandle(workflowIds.agent(agentId));
    // Terminating the queue workflow cancels its active child (parent close policy REQUEST_CANCEL).
    await handle.terminate('agent deleted').catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) {
        throw err;
      }
    });
    await this.runs.update({ agentId, status: 'queued' }, { status: 'cancelled', endedAt: new Date() });
    this.logger.log(
      `agent ${agentId}: queue stopped (active ${state.activeRunId ?? 'none'}, ${state.queuedRunIds.length} queued)`,
    );
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

/** A scheduled firing found the agent busy: skipped, not an error. */
export class RunSkipped extends Error {
  constructor() {
    super('skipped: the agent has a queued or active run');
  }
}
