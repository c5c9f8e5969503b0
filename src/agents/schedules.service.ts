import { Inject, Injectable } from '@nestjs/common';
import { type Client, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import { workflowIds } from '../../workflows/contracts.js';

/** How late a missed firing may still run (after an outage of Temporal or the workers). */
export const SCHEDULE_CATCHUP_WINDOW = '5 minutes';

/** One Temporal Schedule per scheduled agent: created, updated, paused and deleted with the agent. */
@Injectable()
export class SchedulesService {
  constructor(
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  private spec(cron: string, timezone: string | null) {
    return { cronExpressions: [cron], timezone: timezone ?? 'UTC' };
  }

  /** Creates the agent's schedule, or replaces its spec when it exists. */
  async upsert(agentId: string, agentName: string, cron: string, timezone: string | null): Promise<void> {
    const scheduleId = workflowIds.schedule(agentId);
    const handle = this.client.schedule.getHandle(scheduleId);
    try {
      await handle.update((previous) => ({ ...previous, spec: this.spec(cron, timezone), state: { paused: false } }));
      return;
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) {
        throw err;
      }
    }
    await this.client.schedule.create({
      scheduleId,
      spec: this.spec(cron, timezone),
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledTriggerWorkflow',
        workflowId: workflowIds.scheduledTrigger(agentId),
        taskQueue: this.settings.temporalTaskQueue,
        args: [{ agentId }],
        memo: { agentName },
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: SCHEDULE_CATCHUP_WINDOW },
      memo: { agentName },
    });
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

  /** When the schedule fires next, and how many firings it skipped because a run was still going. */
  async describe(
    agentId: string,
  ): Promise<{ nextRunAt: string | null; skippedOverlaps: number; paused: boolean } | null> {
    try {
      const description = await this.client.schedule.getHandle(workflowIds.schedule(agentId)).describe();
      return {
        nextRunAt: description.info.nextActionTimes[0]?.toISOString() ?? null,
        skippedOverlaps: description.info.numActionsSkippedOverlap,
        paused: description.state.paused,
      };
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        return null;
      }
      throw err;
    }
  }
}
