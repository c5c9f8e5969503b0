import { condition, patched, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { SCHEDULED_TRIGGER_LOCAL_PATCH, type ScheduledTriggerInput, type ScheduledTriggerResult } from './contracts.js';
import { runEndedSignal } from './run-queue.js';

const RETRY = { initialInterval: '1 second', maximumAttempts: 10 } as const;
const acts = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });

/**
 * The request for the run, in the trigger's first workflow task: no activity task through the server
 * (its three events, its dispatch, and the workflow task its result would start), which every firing
 * of every scheduled agent paid. Same attempts and limits as the activity it replaces; a task that
 * runs past the workflow task's timeout is kept alive by the worker meanwhile.
 */
const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });

/**
 * What an agent's Temporal Schedule starts. It asks the agent's queue for a run (skipped while one
 * is queued or active) and stays open until that run ends, so the schedule's overlap policy (skip)
 * sees it as running (the skip is then counted in the schedule's info).
 */
export async function scheduledTriggerWorkflow(input: ScheduledTriggerInput): Promise<ScheduledTriggerResult> {
  let ended = false;
  setHandler(runEndedSignal, () => {
    ended = true;
  });
  const result = patched(SCHEDULED_TRIGGER_LOCAL_PATCH)
    ? await local.enqueueScheduledRun(input)
    : await acts.enqueueScheduledRun(input);
  if (result.runId === undefined) {
    return result;
  }
  await condition(() => ended);
  return result;
}
