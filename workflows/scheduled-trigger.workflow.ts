import {
  type RetryPolicy,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ScheduledTriggerInput, ScheduledTriggerResult } from './contracts.js';
import { runEndedSignal } from './run-queue.js';

const retry: RetryPolicy = { initialInterval: '1 second', maximumAttempts: 10 };

/** How triggers started before 2026-11-25 asked for their run (kept for their replay). */
const acts = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry });

/**
 * How a trigger asks for its run: a local activity, run by the worker inside the trigger's first
 * workflow task. An activity task cost a dispatch through Temporal's matching and one more workflow
 * task for its result, for each scheduled run: with 1,000 agents due together that queue was a
 * large part of the wait (README, benchmark 7). Retried the same way, with the same effect on a retry.
 */
const localActs = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry });

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
  const result = patched('local-enqueue')
    ? await localActs.enqueueScheduledRun(input)
    : await acts.enqueueScheduledRun(input);
  if (result.runId === undefined) {
    return result;
  }
  await condition(() => ended);
  return result;
}
