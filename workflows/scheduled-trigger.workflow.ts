import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ScheduledTriggerInput, ScheduledTriggerResult } from './contracts.js';
import { runEndedSignal } from './run-queue.js';

/**
 * An activity, not a local one: the request is an update-with-start of the agent's queue, which the
 * same workers must take a workflow task for; as a local activity it held the trigger's workflow task
 * open meanwhile, and with 1,000 agents due at once (benchmark 7 on compose's server) only 209 runs
 * reached the model in 240 s, at twice the CPU a run, against all 1,000 this way.
 */
const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

/**
 * What an agent's Temporal Schedule starts. It asks the agent's queue for a run (skipped while one
 * is queued or active) and stays open until that run ends, so the schedule's overlap policy (skip)
 * sees it as running.
 */
export async function scheduledTriggerWorkflow(input: ScheduledTriggerInput): Promise<ScheduledTriggerResult> {
  let ended = false;
  setHandler(runEndedSignal, () => {
    ended = true;
  });
  const result = await acts.enqueueScheduledRun(input);
  if (result.runId === undefined) {
    return result;
  }
  await condition(() => ended);
  return result;
}
