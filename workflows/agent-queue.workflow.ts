import {
  allHandlersFinished,
  CancellationScope,
  condition,
  defineUpdate,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import {
  AGENT_HANDLERS,
  type AgentQueueInput,
  type CancelRunResult,
  type FinishRunInput,
  SEARCH_ATTRIBUTES,
} from './contracts.js';
import { executeRun } from './agent-run.workflow.js';
import { notifyRunEnded, runQueue } from './run-queue.js';

export const cancelRunUpdate = defineUpdate<CancelRunResult, [string]>(AGENT_HANDLERS.cancelRun);

/**
 * An execution hands over (continues as new) after a run once it has lived this long. Temporal
 * delays the first task of an execution that follows one younger than its
 * `history.workflowIdReuseMinimalInterval` (1 s by default) by the difference; past it, the next
 * execution starts at once. Before that, the execution waits out the rest, and a request arriving
 * meanwhile runs in it at once: quick runs share an execution, none waits for Temporal's delay.
 */
const HAND_OVER_AFTER_MS = 1_000;
/** Runs one execution takes at most, however quick (its history stays short). */
const MAX_RUNS_PER_EXECUTION = 50;

/** The archive of an ended run: an activity of its own, beside the queue's next work, retried for long. */
const archives = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/**
 * One per agent (`agent-<agentId>`): the agent's run queue, which executes each run itself (no child
 * workflow per run). Runs go one at a time, in arrival order, whatever the trigger; requests keep
 * arriving while a run goes on and join the queue. After a run the execution continues as new with
 * the rest of the queue, once it is old enough not to be held back by Temporal (HAND_OVER_AFTER_MS):
 * a run is found in the Temporal UI by the `AgentRunIds` search attribute, and its timeline is its
 * part of that execution's history. Each ended run is archived by an activity
 * that does not hold up the next run.
 */
export async function agentQueueWorkflow(input: AgentQueueInput): Promise<void> {
  const state = runQueue(input.agentId, input.queue, input.deliveries);
  const { queue } = state;
  let running: CancellationScope | undefined;

  setHandler(cancelRunUpdate, async (runId: string): Promise<CancelRunResult> => {
    if (state.dequeue(runId)) {
      return 'dequeued';
    }
    if (state.active?.runId !== runId || running === undefined) {
      return 'unknown';
    }
    running.cancel();
    // Answers once the run has recorded its end, so the caller reads it ended.
    await condition(() => state.active?.runId !== runId);
    return 'cancelled';
  });

  const ran: string[] = [];
  const archived: Array<Promise<void>> = [];
  for (;;) {
    await condition(() => queue.length > 0 || workflowInfo().continueAsNewSuggested);
    // Every handler's answer is written before a run starts (see agentWorkflow's `handlers-before-run`).
    await condition(allHandlersFinished);
    if (queue.length === 0) {
      break; // continue-as-new suggested while idle
    }
    const request = queue.shift()!;
    state.active = request;
    ran.push(request.runId);
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runIds, value: [...ran] }]);
    running = new CancellationScope();
    const end = await running.run(() => executeRun(request, request.runId));
    running = undefined;
    state.active = undefined;
    archived.push(archive(end.ended));
    await notifyRunEnded(request);
    if (ran.length >= MAX_RUNS_PER_EXECUTION || workflowInfo().continueAsNewSuggested) {
      break;
    }
    const left = HAND_OVER_AFTER_MS - (Date.now() - workflowInfo().runStartTime.getTime());
    // Too young to hand over without delay: a request that arrives meanwhile runs here, at once.
    if (left <= 0 || !(await condition(() => queue.length > 0, left))) {
      break;
    }
  }
  await Promise.all(archived);
  await condition(allHandlersFinished);
  // The next execution carries the agent's attributes, not the runs this one ran.
  const attributes = workflowInfo().typedSearchAttributes;
  const userId = attributes.get(SEARCH_ATTRIBUTES.userId);
  await makeContinueAsNewFunc<typeof agentQueueWorkflow>({
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.agentId, value: input.agentId },
      ...(userId !== undefined ? [{ key: SEARCH_ATTRIBUTES.userId, value: userId }] : []),
    ],
  })({ agentId: input.agentId, queue, deliveries: state.deliveries() });
}

/** Keeps an ended run's timeline in the database (refused only when the run's row is gone). */
async function archive(ended: FinishRunInput): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() => archives.archiveRun(ended));
  } catch {
    // Its history stays its timeline until Temporal's retention.
  }
}
