import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type Client,
  type Workflow,
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentEntity } from '../agents/agent.entity.js';
import { AppError } from '../common/app-error.js';
import { KeyedSerializer } from '../common/keyed-serializer.js';
import { addLogFields, currentRequestId } from '../common/log-context.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { agentQueueStart } from '../temporal/agent-queue-start.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import {
  AGENT_HANDLERS,
  type EnqueueMode,
  type EnqueueResult,
  FAILURE,
  type RunRequest,
  type RunTrigger,
  workflowIds,
} from '../../workflows/contracts.js';
import { type RunResponse, toRunResponse } from './run-response.js';
import type { RunEntity } from './run.entity.js';
import { RunsRepository } from './runs.repository.js';
import { isTransientTemporalError, TemporalBusyError } from './temporal-transient.js';
import { repairUnstartedRuns } from './unstarted-runs.js';

export interface EnqueueOptions {
  triggeredBy: RunTrigger;
  /** A scheduled firing's request is a signal instead (ScheduledRunsService). */
  mode: Exclude<EnqueueMode, 'skip_if_busy'>;
  input?: string | null;
  payload?: unknown;
  actionOverride?: string | null;
  deliveryId?: string | null;
}

export interface Enqueued {
  run: RunResponse;
  queuePosition: number;
  duplicate: boolean;
}

/** The cause of a refused Update: the ApplicationFailure our validator threw. */
function updateFailureType(err: unknown): string | undefined {
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    return err.cause.type ?? undefined;
  }
  return undefined;
}

/** When a sender refused for a full queue is told to come back (Retry-After). */
const QUEUE_FULL_RETRY_SECONDS = 60;

/** Tries of a refused manual start while the agent's previous run is closing (about 4.5 s in all). */
const CLOSING_RUN_RETRIES = 10;

/** Transient Temporal failures of a start retried within the request, after 200, 400 and 800 ms. */
const TRANSIENT_RETRIES = 3;
const TRANSIENT_BACKOFF_MS = 200;

/** Stale rows of the agent repaired at most per start (there is at most one per dead API process). */
const UNSTARTED_REPAIR_LIMIT = 10;

/** Runs handed to their agent's queue workflow: the row first, then Temporal. */
@Injectable()
export class RunEnqueueService {
  /** The webhook intake of each agent, one delivery at a time in this process (see enqueueWebhook). */
  private readonly webhookIntake = new KeyedSerializer();
  private readonly logger = new Logger('Runs');

  constructor(
    private readonly runs: RunsRepository,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Hands a run to the agent's queue workflow with update-with-start: once this returns, the run is
   * in Temporal's history (durable), whatever happens to this process next.
   */
  async enqueue(agent: AgentEntity, options: EnqueueOptions): Promise<Enqueued> {
    if (options.deliveryId) {
      const existing = await this.runs.findByDelivery(agent.id, options.deliveryId);
      if (existing !== null) {
        return { run: toRunResponse(existing), queuePosition: 0, duplicate: true };
      }
    }
    const request = runRequest(agent, options);
    addLogFields({ agentId: agent.id, runId: request.runId });
    // The row first: the worker starts only runs whose row the API wrote (startRun), and the run may
    // start as soon as the update is accepted.
    const row = this.queuedRow(request, options);
    // A row a dead API process left queued for this agent (its start never reached Temporal) is not a
    // run: it goes first, so it neither sits in the run list nor blocks the retry below.
    await this.repairUnstartedRuns(UNSTARTED_REPAIR_LIMIT, agent.id).catch(() => undefined);
    let result: EnqueueResult | undefined;
    let transientTries = 0;
    for (let attempt = 1; result === undefined; attempt += 1) {
      await this.runs.insertQueued(row, false);
      try {
        result = await this.updateWithStart(agent, request);
      } catch (err) {
        const transient = isTransientTemporalError(err);
        if (transient && transientTries < TRANSIENT_RETRIES) {
          // Temporal overloaded or away for a moment: the same update again (its id makes a repeat
          // that did get through find the first), the row kept meanwhile for a run that may start.
          transientTries += 1;
          await new Promise((resolve) => setTimeout(resolve, TRANSIENT_BACKOFF_MS * 2 ** (transientTries - 1)));
          continue;
        }
        // Not queued (refused, or unknown): leave no row that would look queued forever. Only a row
        // still queued goes; if the update did get through and the run has started, it stays.
        await this.runs.deleteIfQueued(request.runId).catch(() => undefined);
        switch (updateFailureType(err)) {
          case FAILURE.agentAlreadyRunning:
            // The queue still holds a run whose row has ended: its workflow is taking its last step
            // (the archive) and closes within moments. Whoever just saw that run end is not refused.
            if (attempt < CLOSING_RUN_RETRIES && !(await this.runs.hasOpenRun(agent.id))) {
              await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
              continue;
            }
            throw new AppError('AGENT_ALREADY_RUNNING', 'The agent already has a queued or active run');
          default:
            // Still failing after the retries: nothing was queued, and the client may retry shortly.
            throw transient ? new TemporalBusyError() : err;
        }
      }
    }
    if (result.duplicate && result.runId !== request.runId) {
      // A repeated delivery: the first delivery's run stands for it, this row was never queued.
      await this.runs.deleteIfQueued(request.runId);
      request.runId = result.runId;
    }
    addLogFields({ runId: request.runId });
    if (!result.duplicate) {
      this.metrics.runsQueued.inc({ trigger: request.triggeredBy });
    }
    const stored = (await this.runs.findById(request.runId)) ?? row;
    return { run: toRunResponse(stored), queuePosition: result.queuePosition, duplicate: result.duplicate };
  }

  /**
   * Deletes up to `limit` rows left `queued` by starts that never reached their agent's queue workflow
   * (see unstarted-runs.ts); of one agent if given. For a periodic sweep (the run reconciler) and the
   * start of every manual or scheduled run of the agent. Returns the ids deleted.
   */
  async repairUnstartedRuns(limit: number, agentId?: string): Promise<string[]> {
    const deleted = await repairUnstartedRuns(this.runs, this.client, limit, agentId);
    if (deleted.length > 0) {
      this.logger.warn(`deleted ${deleted.length} run rows whose start never reached Temporal: ${deleted.join(', ')}`);
    }
    return deleted;
  }

  private updateWithStart(agent: AgentEntity, request: RunRequest): Promise<EnqueueResult> {
    return this.client.workflow.executeUpdateWithStart<Workflow, EnqueueResult, [RunRequest]>(
      AGENT_HANDLERS.enqueueRun,
      {
        args: [request],
        updateId: request.deliveryId ? `delivery-${request.deliveryId}` : `run-${request.runId}`,
        startWorkflowOperation: new WithStartWorkflowOperation('agentQueueWorkflow', {
          ...agentQueueStart(agent, this.settings),
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        }),
      },
    );
  }

  /**
   * A webhook's run: its row first (the unique delivery id settles concurrent duplicates), then a
   * signal-with-start to the agent's queue workflow. A signal is durable once the server accepts it,
   * so the 202 needs no round trip through a worker. A repeated delivery re-sends the first run's
   * request (the workflow ignores it if it has it), so a first attempt that died half-way still runs.
   */
  async enqueueWebhook(agent: AgentEntity, options: Omit<EnqueueOptions, 'mode' | 'triggeredBy'>): Promise<Enqueued> {
    // One delivery of an agent at a time, from its row to its signal: the queue workflow takes the
    // requests in the order their signals arrive, so a delivery's signal must arrive before the next
    // one's row counts it ahead (else two positions could swap). The insert's own lock makes positions
    // distinct across API processes too; this makes them the queue's order within one.
    return this.webhookIntake.run(agent.id, () => this.enqueueWebhookNow(agent, options));
  }

  private async enqueueWebhookNow(
    agent: AgentEntity,
    options: Omit<EnqueueOptions, 'mode' | 'triggeredBy'>,
  ): Promise<Enqueued> {
    const request = runRequest(agent, {
      ...options,
      input: null,
      triggeredBy: 'webhook',
      mode: 'queue',
    });
    addLogFields({ agentId: agent.id, runId: request.runId });
    // One insert writes the row and counts the runs queued before it (under the agent's lock); a
    // repeated delivery id inserts nothing and returns no row.
    let run = this.queuedRow(request, options);
    const { inserted, ahead } = await this.runs.insertQueued(run, true);
    const duplicate = !inserted;
    let queuePosition = ahead;
    if (duplicate) {
      // The first delivery's run and request are sent again (see above).
      run = await this.runs.findByDeliveryOrFail(agent.id, request.deliveryId!);
      request.runId = run.id;
      request.requestedAt = run.queuedAt.toISOString();
      request.actionOverride = run.systemPromptSource === 'webhook_action';
      queuePosition = await this.runs.countAhead(run);
      addLogFields({ runId: run.id });
    } else if (ahead >= this.settings.maxQueuedRuns) {
      // A queue this long would outgrow what Temporal carries from one execution of the agent's queue
      // to the next: refused before it is accepted (the sender retries later), never dropped after.
      await this.runs.deleteIfQueued(request.runId);
      throw new AppError(
        'RATE_LIMITED',
        `The agent already has ${ahead} runs queued or running, the most it takes (MAX_QUEUED_RUNS); retry later`,
        undefined,
        QUEUE_FULL_RETRY_SECONDS,
      );
    }
    try {
      await this.client.workflow.signalWithStart('agentQueueWorkflow', {
        ...agentQueueStart(agent, this.settings),
        signal: AGENT_HANDLERS.enqueueRunSignal,
        signalArgs: [request],
      });
    } catch (err) {
      if (!duplicate) {
        // Not queued: leave no row that would look queued forever (a retried delivery starts afresh).
        await this.runs.deleteIfQueued(request.runId).catch(() => undefined);
      }
      throw err;
    }
    if (!duplicate) {
      this.metrics.runsQueued.inc({ trigger: 'webhook' });
    }
    return { run: toRunResponse(run), queuePosition, duplicate };
  }

  /** The run's row: what triggered it, whole (the request sent to Temporal carries no payload). */
  private queuedRow(request: RunRequest, options: Pick<EnqueueOptions, 'payload'>): RunEntity {
    return this.runs.create({
      id: request.runId,
      agentId: request.agentId,
      userId: request.userId,
      status: 'queued',
      triggeredBy: request.triggeredBy,
      payload: options.payload ?? null,
      input: request.input,
      systemPromptSource: request.actionOverride ? 'webhook_action' : 'agent',
      deliveryId: request.deliveryId,
      // The agent's queue runs it; its execution (temporalRunId) is known when the run starts.
      workflowId: workflowIds.agent(request.agentId),
      temporalRunId: null,
      error: null,
      usage: { inputTokens: 0, outputTokens: 0, credits: 0 },
      queuedAt: new Date(request.requestedAt),
    });
  }
}

/**
 * The request the queue workflow receives for a new run (its id is ours). The webhook's payload and
 * action stay in the run's row, which the run's turns read: a queue of waiting webhooks then weighs a
 * few hundred bytes a run in Temporal whatever the payloads, and a payload is not copied into the
 * history of every turn.
 */
function runRequest(agent: AgentEntity, options: EnqueueOptions): RunRequest {
  return {
    runId: randomUUID(),
    agentId: agent.id,
    userId: agent.userId,
    agentName: agent.name,
    triggeredBy: options.triggeredBy,
    input: options.input ?? null,
    payload: null,
    actionOverride: options.actionOverride ? true : null,
    deliveryId: options.deliveryId ?? null,
    mode: options.mode,
    requestedAt: new Date().toISOString(),
    // The asking request's id (an HTTP request's; none for a schedule's firing in the worker).
    ...optionalRequestId(),
  };
}

function optionalRequestId(): Pick<RunRequest, 'requestId'> {
  const requestId = currentRequestId();
  return requestId === undefined ? {} : { requestId };
}
