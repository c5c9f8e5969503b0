import {
  allHandlersFinished,
  CancellationScope,
  condition,
  defineUpdate,
  makeContinueAsNewFunc,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { AGENT_HANDLERS, type AgentQueueInput, type CancelRunResult, SEARCH_ATTRIBUTES } from './contracts.js';
import { archiveRun, executeRun } from './agent-run.workflow.js';
import { notifyRunEnded, runQueue } from './run-queue.js';

export const cancelRunUpdate = defineUpdate<CancelRunResult, [string]>(AGENT_HANDLERS.cancelRun);

/**
 * An execution hands over (continues as new, with the rest of the queue) after this many runs, or
 * once it has waited `idleSeconds` (AGENT_QUEUE_IDLE_SECONDS) for a request: executions stay short-lived (so the run retention can
 * delete old runs' histories, which it does only for closed executions) without a new execution per
 * run. A new execution per run would cost Temporal a timer, a continue-as-new and a workflow task
 * more for every run, and Temporal holds back the first task of an execution that follows one younger
 * than its `history.workflowIdReuseMinimalInterval` (1 s by default).
 */
const MAX_RUNS_PER_EXECUTION = 20;
/** The idle wait when the input names none (AGENT_QUEUE_IDLE_SECONDS' default). */
const IDLE_HAND_OVER_SECONDS = 600;

/**
 * One per agent (`agent-<agentId>`): the agent's run queue, which executes each run itself (no child
 * workflow per run). Runs go one at a time, in arrival order, whatever the trigger; requests keep
 * arriving while a run goes on and join the queue. An execution runs up to MAX_RUNS_PER_EXECUTION
 * runs, then continues as new with the rest of the queue; an idle one hands over after `idleSeconds`. A run is found in the Temporal UI by the `AgentRunIds` search attribute, its
 * timeline is its part of that execution's history, and once it has ended it is archived by a local
 * activity (no task through the server) before the next run starts.
 */
export async function agentQueueWorkflow(input: AgentQueueInput): Promise<void> {
  const state = runQueue(input.agentId, input.queue, input.deliveries);
  const { queue } = state;
  const idleSeconds =
    Number.isSafeInteger(input.idleSeconds) && input.idleSeconds! > 0 ? input.idleSeconds! : IDLE_HAND_OVER_SECONDS;
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
  while (ran.length < MAX_RUNS_PER_EXECUTION && !workflowInfo().continueAsNewSuggested) {
    const requested = await condition(
      () => queue.length > 0 || workflowInfo().continueAsNewSuggested,
      idleSeconds * 1000,
    );
    // Every handler's answer is written before a run starts (see agentWorkflow's `handlers-before-run`).
    await condition(allHandlersFinished);
    if (!requested || queue.length === 0) {
      break; // idle for long, or continue-as-new suggested
    }
    const request = queue.shift()!;
    state.active = request;
    ran.push(request.runId);
    const fromEventId = workflowInfo().historyLength;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runIds, value: [...ran] }]);
    running = new CancellationScope();
    const end = await running.run(() => executeRun(request, request.runId));
    running = undefined;
    state.active = undefined;
    // The run has ended for its user (its row says so); its archive comes before the next run.
    await archiveRun({ ...end.ended, fromEventId });
    await notifyRunEnded(request);
  }
  await condition(allHandlersFinished);
  // The next execution carries the agent's attributes, not the runs this one ran.
  const attributes = workflowInfo().typedSearchAttributes;
  const userId = attributes.get(SEARCH_ATTRIBUTES.userId);
  await makeContinueAsNewFunc<typeof agentQueueWorkflow>({
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.agentId, value: input.agentId },
      ...(userId !== undefined ? [{ key: SEARCH_ATTRIBUTES.userId, value: userId }] : []),
    ],
  })({ agentId: input.agentId, idleSeconds, queue, deliveries: state.deliveries() });
}
