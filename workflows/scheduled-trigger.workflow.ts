import { condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ScheduledTriggerInput, ScheduledTriggerResult } from './contracts.js';
import { runEndedSignal, runSkippedSignal } from './run-queue.js';

const RETRY = { initialInterval: '1 second', maximumAttempts: 10 } as const;
const acts = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });

/**
 * The request in the trigger's first workflow task (input.localRequest), with the activity's
 * attempts and limits. It writes a row and sends a signal, which returns once the server has it;
 * it does not wait for the queue (an update-with-start did: asked locally, it held the trigger's
 * task open while the queue's task waited for the same workers, and with 1,000 agents due at once
 * only 209 runs reached the model in 240 s).
 */
const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });

/**
 * What an agent's Temporal Schedule starts. It asks the agent's queue for a run (skipped while one
 * is queued or active) and stays open until that run ends, so the schedule's overlap policy (skip)
 * sees it as running. The activity writes the run's row and signals the queue; a queue that finds
 * the agent busy skips the run and says so (runSkipped), and the firing drops the row.
 */
export async function scheduledTriggerWorkflow(input: ScheduledTriggerInput): Promise<ScheduledTriggerResult> {
  let ended = false;
  let skipped: string | undefined;
  setHandler(runEndedSignal, () => {
    ended = true;
  });
  setHandler(runSkippedSignal, (runId: string) => {
    skipped = runId;
  });
  const result =
    input.localRequest === true ? await local.enqueueScheduledRun(input) : await acts.enqueueScheduledRun(input);
  if (result.runId === undefined) {
    return result;
  }
  await condition(() => ended || skipped === result.runId);
  if (!ended && skipped === result.runId) {
    await (input.localRequest === true ? local : acts).dropSkippedScheduledRun({
      agentId: input.agentId,
      runId: result.runId,
    });
    return { skipped: 'the agent had a queued or active run' };
  }
  return result;
}
