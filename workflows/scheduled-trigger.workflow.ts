import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ScheduledTriggerInput, ScheduledTriggerResult } from './contracts.js';
import { runEndedSignal, runSkippedSignal } from './run-queue.js';

/**
 * An activity: a local one was measured when the request was an update-with-start, which waited for
 * a workflow task of the queue on the same workers while it held the trigger's own task open (with
 * 1,000 agents due at once, 209 runs reached the model in 240 s at twice the CPU a run). The request
 * is a signal now, which returns once the server has it.
 */
const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

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
  const result = await acts.enqueueScheduledRun(input);
  if (result.runId === undefined) {
    return result;
  }
  await condition(() => ended || skipped === result.runId);
  if (!ended && skipped === result.runId) {
    await acts.dropSkippedScheduledRun({ agentId: input.agentId, runId: result.runId });
    return { skipped: 'the agent had a queued or active run' };
  }
  return result;
}
