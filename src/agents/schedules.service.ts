import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type Client,
  ScheduleClient,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleUpdateOptions,
  type Workflow,
  WorkflowIdConflictPolicy,
} from '@temporalio/client';
import { compileUpdatedScheduleOptions } from '@temporalio/client/lib/schedule-helpers.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { agentQueueStart } from '../temporal/agent-queue-start.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import { workflowIds } from '../../workflows/contracts.js';

/** How late a missed firing may still run (after an outage of Temporal or the workers). */
export const SCHEDULE_CATCHUP_WINDOW = '5 minutes';

/**
 * How long reading an agent waits for its schedule's description. A description is a query to the
 * schedule's workflow, which a loaded server has answered only after 30 s: the agent is served without
 * it rather than waiting (or failing) with Temporal.
 */
export const SCHEDULE_DESCRIBE_TIMEOUT_MS = 3_000;

/** A schedule's state as GET /api/agents/:id shows it. */
export interface ScheduleState {
  nextRunAt: string | null;
  skippedOverlaps: number;
  paused: boolean;
}

/**
 * The SDK's schedule client with one more call: UpdateSchedule given the schedule's whole definition.
 * The SDK's `handle.update()` describes the schedule first, and a description is a query to the
 * schedule's workflow, which a busy server answered only after 20 s and more (a PATCH of the agent
 * waited for it). An agent's schedule is wholly defined by the agent, so nothing of it needs reading.
 */
class AgentScheduleClient extends ScheduleClient {
  /** Replaces the schedule's spec, action, policies and state; ScheduleNotFoundError when there is none. */
  async replace(scheduleId: string, definition: ScheduleUpdateOptions): Promise<void> {
    await this._updateSchedule(scheduleId, compileUpdatedScheduleOptions(scheduleId, definition), {});
  }
}

/** One Temporal Schedule per scheduled agent: created, updated, paused and deleted with the agent. */
@Injectable()
export class SchedulesService {
  private readonly replacing: AgentScheduleClient;
  private readonly logger = new Logger('Agents');

  constructor(
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    // The same connection, namespace and payload codec as the service's client.
    this.replacing = new AgentScheduleClient({
      connection: client.connection,
      namespace: client.options.namespace,
      dataConverter: client.options.dataConverter,
    });
  }

  /** The schedule of an agent, whole: what creating it sets, and what replacing it sets again. */
  private definition(
    agentId: string,
    agentName: string,
    cron: string,
    timezone: string | null,
  ): ScheduleUpdateOptions<ScheduleOptionsStartWorkflowAction<Workflow>> {
    return {
      spec: { cronExpressions: [cron], timezone: timezone ?? 'UTC' },
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledTriggerWorkflow',
        workflowId: workflowIds.scheduledTrigger(agentId),
        taskQueue: this.settings.temporalTaskQueue,
        args: [{ agentId, localRequest: true }],
        memo: { agentName },
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: SCHEDULE_CATCHUP_WINDOW },
      state: { paused: false },
    };
  }

  /** Creates the agent's schedule, or replaces its definition when it exists (without reading it first). */
  async upsert(agentId: string, agentName: string, cron: string, timezone: string | null): Promise<void> {
    const scheduleId = workflowIds.schedule(agentId);
    const definition = this.definition(agentId, agentName, cron, timezone);
    try {
      await this.replacing.replace(scheduleId, definition);
      return;
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) {
        throw err;
      }
    }
    await this.client.schedule.create({ scheduleId, ...definition, memo: { agentName } });
  }

  /**
   * Starts the scheduled agent's queue workflow unless it runs already, so that its firings find it
   * running: a firing then signals it, where it would otherwise start it (a workflow start each, at
   * the busiest moment, when many agents are due together). Once started, a queue runs for as long as
   * its agent exists. Best effort: a firing that finds no queue starts it (signal-with-start).
   */
  async startQueue(agent: { id: string; userId: string; name: string }): Promise<void> {
    try {
      await this.client.workflow.start('agentQueueWorkflow', {
        ...agentQueueStart(agent, this.settings),
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      });
    } catch (err) {
      this.logger.warn(
        `the queue of agent ${agent.id} was not started with its schedule (its first firing starts it): ${(err as Error).name}`,
      );
    }
  }

  async remove(agentId: string): Promise<void> {
    try {
      await this.client.schedule.getHandle(workflowIds.schedule(agentId)).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) {
        throw err;
      }
    }
  }

  /**
   * When the schedule fires next, and how many firings it skipped because a run was still going: null
   * when the schedule does not exist, undefined when Temporal did not answer within
   * SCHEDULE_DESCRIBE_TIMEOUT_MS or failed (logged; the caller serves the agent without it).
   */
  async describe(agentId: string): Promise<ScheduleState | null | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${SCHEDULE_DESCRIBE_TIMEOUT_MS} ms`)),
        SCHEDULE_DESCRIBE_TIMEOUT_MS,
      );
    });
    // No connection.withDeadline: see HealthController (its AsyncLocalStorage slows the whole process).
    // The call left behind ends with the client's own deadline.
    const described = this.client.schedule.getHandle(workflowIds.schedule(agentId)).describe();
    try {
      const description = await Promise.race([described, timeout]);
      return {
        nextRunAt: description.info.nextActionTimes[0]?.toISOString() ?? null,
        skippedOverlaps: description.info.numActionsSkippedOverlap,
        paused: description.state.paused,
      };
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        return null;
      }
      this.logger.warn(`the schedule of agent ${agentId} was not described: ${(err as Error).message}`);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
