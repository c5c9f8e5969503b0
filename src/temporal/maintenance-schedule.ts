import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';

/**
 * One of the service's own maintenance jobs (run retention, the reconcilers): a Temporal Schedule
 * starting a workflow of the worker's task queue. Durable: a firing missed while Temporal or the
 * workers were down runs late (within the catch-up window), and two firings never overlap.
 */
export interface MaintenanceSchedule {
  /** One per task queue (workflowIds.*): stacks and deployments sharing a namespace never share it. */
  scheduleId: string;
  workflowType: string;
  taskQueue: string;
  /** When it fires (cron in UTC, or an interval). */
  spec: Pick<ScheduleSpec, 'cronExpressions' | 'intervals'>;
  /** What an operator reads in the schedule's info (the Temporal UI, `temporal schedule describe`). */
  note: string;
  /** A firing missed by less than this still runs. */
  catchupWindow: Duration;
}

export type ScheduleSync = 'created' | 'updated' | 'removed' | 'absent';

/**
 * Makes the schedule match `schedule`, idempotently (each worker calls it at every start, several
 * workers at once included): created or updated, or deleted when `schedule` is undefined.
 * The workflow's id is the schedule's id, so a firing finds a still-running previous one (SKIP).
 */
export async function syncMaintenanceSchedule(
  client: Client,
  scheduleId: string,
  schedule: MaintenanceSchedule | undefined,
): Promise<ScheduleSync> {
  const handle = client.schedule.getHandle(scheduleId);
  if (schedule === undefined) {
    try {
      await handle.delete();
      return 'removed';
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        return 'absent';
      }
      throw err;
    }
  }
  const action = {
    type: 'startWorkflow' as const,
    workflowType: schedule.workflowType,
    workflowId: scheduleId,
    taskQueue: schedule.taskQueue,
    args: [],
  };
  const spec = { ...schedule.spec, timezone: 'UTC' };
  const { note } = schedule;
  const update = (): Promise<void> =>
    handle.update((previous) => ({ ...previous, spec, action, state: { ...previous.state, note } }));
  try {
    await update();
    return 'updated';
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) {
      throw err;
    }
  }
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: schedule.catchupWindow },
      state: { note },
    });
    return 'created';
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) {
      // Another process created it meanwhile.
      await update();
      return 'updated';
    }
    throw err;
  }
}
