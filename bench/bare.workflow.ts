/** The baseline of benchmark 2: a bare Temporal workflow making the same calls as a run, nothing else. */
import { proxyActivities } from '@temporalio/workflow';
import type { BareActivities } from './bare.activities.js';

const acts = proxyActivities<BareActivities>({ startToCloseTimeout: '30 seconds' });

export async function bareRunWorkflow(): Promise<string> {
  const first = await acts.bareModelTurn([{ role: 'user', content: 'go' }]);
  const result = await acts.bareToolCall();
  return acts.bareModelTurn([
    { role: 'user', content: 'go' },
    { role: 'assistant', content: first },
    { role: 'user', content: result },
  ]);
}

/**
 * The baseline of benchmark 7: what a bare Temporal schedule starts, its first activity the model
 * call (the marker, in the message, tells the fake model which schedule's run it serves).
 */
export async function bareCronWorkflow(marker: string): Promise<string> {
  return acts.bareModelTurn([{ role: 'user', content: marker }]);
}
