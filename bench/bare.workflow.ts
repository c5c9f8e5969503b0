/** The baseline of benchmark 2: a bare Temporal workflow making the same calls as a run, nothing else. */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
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
 * BENCH_DESIGNS: bare models of the two run paths, to price the queue's hop without the service's
 * own work. Each takes requests by signal (signal-with-start, as webhooks do).
 */
export const bareRequest = defineSignal<[string]>('bareRequest');

/**
 * Benchmark 10's bare webhook run: started by a signal-with-start (as a webhook's run is), it makes the
 * run's calls once the signal is in.
 */
export async function bareSignaledRunWorkflow(): Promise<string> {
  let requested = false;
  setHandler(bareRequest, () => void (requested = true));
  await condition(() => requested);
  return bareRunWorkflow();
}

/** Today's path: the queue workflow starts each request as a child workflow (`<id>-<request>`). */
export async function bareQueueHopWorkflow(): Promise<void> {
  const queue: string[] = [];
  setHandler(bareRequest, (id) => void queue.push(id));
  for (;;) {
    await condition(() => queue.length > 0);
    const id = queue.shift()!;
    await executeChild(bareRunWorkflow, { workflowId: `${workflowInfo().workflowId}-${id}` });
  }
}

/** The proposed path: the queue workflow makes the calls itself, then continues as new with the rest. */
export async function bareQueueInlineWorkflow(pending: string[] = []): Promise<string> {
  const queue = [...pending];
  setHandler(bareRequest, (id) => void queue.push(id));
  await condition(() => queue.length > 0);
  queue.shift();
  await bareRunWorkflow();
  await condition(allHandlersFinished);
  return continueAsNew<typeof bareQueueInlineWorkflow>(queue);
}

/**
 * The baseline of benchmark 7: what a bare Temporal schedule starts, its first activity the model
 * call (the marker, in the message, tells the fake model which schedule's run it serves).
 */
export async function bareCronWorkflow(marker: string): Promise<string> {
  return acts.bareModelTurn([{ role: 'user', content: marker }]);
}

/** Benchmark 5's floor: an idle queue of the bare kind (a signal to wait for, a query to answer). */
export const bareState = defineQuery<number>('bareState');

export async function bareIdleQueueWorkflow(): Promise<void> {
  const queue: string[] = [];
  setHandler(bareRequest, (id) => void queue.push(id));
  setHandler(bareState, () => queue.length);
  await condition(() => queue.length > 0);
}

/**
 * Benchmark 5w's floor: a run waiting for a person, the bare kind. Its first model turn asks for a
 * call, the request is recorded (an activity), then it waits on a durable timer for an Update with the
 * decision, as a run of the service waits for approval.
 */
export const bareDecide = defineUpdate<void, [string]>('bareDecide');

export async function bareWaitingWorkflow(): Promise<string> {
  let decision: string | undefined;
  setHandler(bareDecide, (decided) => void (decision = decided));
  const asked = await acts.bareModelTurn([{ role: 'user', content: 'go' }]);
  await acts.bareRecordRequest(asked);
  await condition(() => decision !== undefined, '24 hours');
  return decision ?? 'expired';
}
