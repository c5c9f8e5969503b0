import {
  allHandlersFinished,
  CancellationScope,
  condition,
  defineUpdate,
  makeContinueAsNewFunc,
  patched,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  AGENT_HANDLERS,
  type AgentQueueInput,
  ARCHIVE_AT_HANDOVER_PATCH,
  type ArchiveRunsInput,
  type CancelRunResult,
  MAX_RUNS_PER_EXECUTION,
  runIdsToList,
  SEARCH_ATTRIBUTES,
} from './contracts.js';
import { archiveHandedOverRuns, archiveRun, archiveRuns, executeRun } from './agent-run.workflow.js';
import { approvalGate } from './approval-wait.js';
import { notifyRunOutcome } from './notify.js';
import { notifyRunEnded, runQueue } from './run-queue.js';

export const cancelRunUpdate = defineUpdate<CancelRunResult, [string]>(AGENT_HANDLERS.cancelRun);

/**
 * An execution hands over (continues as new, with the rest of the queue) after MAX_RUNS_PER_EXECUTION
 * runs, or `executionSeconds` (AGENT_QUEUE_EXECUTION_SECONDS) after its first run began, once the run
 * in progress has ended: so executions stay short-lived (the run retention deletes old runs' histories
 * only once their execution has closed, and a run's archive waits for the hand-over) without a new
 * execution per run. A new execution per run would cost Temporal a timer, a continue-as-new and a
 * workflow task more for every run, and Temporal holds back the first task of an execution that
 * follows one younger than its `history.workflowIdReuseMinimalInterval` (1 s by default). One timer
 * per execution that ran something marks its age.
 */
/** The execution's length when the input names none (AGENT_QUEUE_EXECUTION_SECONDS' default). */
const EXECUTION_SECONDS = 600;

/**
 * One per agent (`agent-<agentId>`): the agent's run queue, which executes each run itself (no child
 * workflow per run). Runs go one at a time, in arrival order, whatever the trigger; requests keep
 * arriving while a run goes on and join the queue. An execution runs up to MAX_RUNS_PER_EXECUTION
 * runs or lasts `executionSeconds`, then continues as new with the rest of the queue. A run is found
 * in the Temporal UI by the `AgentRunIds` search attribute, its timeline is its part of that
 * execution's history (read live, until it is archived), and the runs an execution ran are archived
 * together by one activity of the next execution, started as it begins, beside its first run
 * (an execution started without `archiveAfterHandover`: by a local activity at its hand-over).
 */
export async function agentQueueWorkflow(input: AgentQueueInput): Promise<void> {
  const state = runQueue(input.agentId, input.queue, input.deliveries);
  const { queue } = state;
  // The runs the previous execution ran: archived beside this one's runs (only new executions get them).
  const archivingPrevious = input.archive !== undefined ? archiveHandedOverRuns(input.archive) : undefined;
  // The active run's call waiting for a decision, if any (the decideApproval Update reaches it).
  const approvals = approvalGate();
  const executionSeconds =
    Number.isSafeInteger(input.executionSeconds) && input.executionSeconds! > 0
      ? input.executionSeconds!
      : EXECUTION_SECONDS;
  // Set once the execution's first run began `executionSeconds` ago (an execution that ran nothing
  // waits for a request for as long as it takes: it holds no run's history).
  let old = false;
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
  // The run ids AgentRunIds lists, and the runs ended and not yet archived (the patched path).
  let listed = new Set<string>();
  const ended: ArchiveRunsInput = { runs: [] };
  // Whether the next execution archives this one's runs (see AgentQueueInput.archiveAfterHandover).
  const archiveAfter = input.archiveAfterHandover === true;
  while (ran.length < MAX_RUNS_PER_EXECUTION && !old && !workflowInfo().continueAsNewSuggested) {
    await condition(() => queue.length > 0 || old || workflowInfo().continueAsNewSuggested);
    // Every handler's answer is written before a run starts: the traced bundle's Update interceptor
    // answers a few yields later than the plain one, and without this wait the two bundles would order
    // these commands differently and could not replay each other's histories (turning tracing on or
    // off, or a mix of workers).
    await condition(allHandlersFinished);
    if (queue.length === 0) {
      break; // old enough to hand over, or continue-as-new suggested
    }
    const request = queue.shift()!;
    state.active = request;
    ran.push(request.runId);
    // Its marker goes in the task of the run's first model turn, with the other patches' (one action).
    const atHandover = patched(ARCHIVE_AT_HANDOVER_PATCH);
    if (ran.length === 1) {
      void sleep(executionSeconds * 1000).then(() => {
        old = true;
      });
    }
    const fromEventId = workflowInfo().historyLength;
    if (!atHandover) {
      upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runIds, value: [...ran] }]);
    } else if (!listed.has(request.runId)) {
      // The runs queued behind it too, as many as this execution runs: a burst of queued runs costs
      // one upsert, not one each (a run that arrives while the queue is idle still costs its own).
      listed = new Set(
        runIdsToList(
          ran,
          queue.map((r) => r.runId),
        ),
      );
      upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runIds, value: [...listed] }]);
    }
    running = new CancellationScope();
    const end = await running.run(() => executeRun(request, request.runId, approvals));
    running = undefined;
    state.active = undefined;
    // The run has ended for its user (its row says so); until it is archived its timeline is read from
    // this execution's history, which Temporal keeps while the execution is open.
    await notifyRunOutcome(end.notify, { agentId: input.agentId, runId: request.runId, status: end.ended.status });
    if (atHandover) {
      ended.agentId = input.agentId;
      ended.userId = request.userId;
      ended.runs.push({ runId: request.runId, status: end.ended.status, fromEventId });
    } else {
      await archiveRun({ ...end.ended, fromEventId });
    }
    await notifyRunEnded(request);
  }
  await condition(allHandlersFinished);
  // Ended before this execution hands over (long done, as a rule: it began with the execution).
  await archivingPrevious;
  if (!archiveAfter) {
    await archiveRuns(ended);
  }
  // The next execution carries the agent's attributes, not the runs this one ran.
  const attributes = workflowInfo().typedSearchAttributes;
  const userId = attributes.get(SEARCH_ATTRIBUTES.userId);
  await makeContinueAsNewFunc<typeof agentQueueWorkflow>({
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.agentId, value: input.agentId },
      ...(userId !== undefined ? [{ key: SEARCH_ATTRIBUTES.userId, value: userId }] : []),
    ],
  })({
    agentId: input.agentId,
    executionSeconds,
    queue,
    deliveries: state.deliveries(),
    archiveAfterHandover: true,
    ...(archiveAfter && ended.runs.length > 0 ? { archive: { ...ended, executionRunId: workflowInfo().runId } } : {}),
  });
}
