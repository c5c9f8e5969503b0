/**
 * The workflow layer's test harness: the shipped workflow bundle in a real Worker against a real
 * Temporal dev server, with the activities replaced by plain functions registered under the same
 * names, which record what they were called with.
 *
 * Why not the time-skipping test server: it is a separate download (`temporal-test-server`), which
 * these machines cannot fetch (temporal.download does not resolve; STACK-NOTES, Temporal). The dev
 * server is the Temporal CLI the project already caches (scripts/runtime/temporal.ts), so timers run
 * in real time: the tests keep waits short through the inputs that decide them (`executionSeconds`,
 * the `retryAfterSeconds` a mocked tool answers), and test a long constant's boundary (the 300 s cap
 * of a Retry-After wait) through the value that decides it, never by waiting it out.
 *
 * The workers run in `debugMode` (the same bundle and sandbox, in the test's thread rather than a
 * worker thread): they start in about 0.5 s instead of 2.5 s. Each test has its own task queue,
 * worker and workflow ids; each file its own dev server. `npm run test:workflows` runs the layer.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, defineSearchAttributeKey } from '@temporalio/common';
import type proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';
import { toApplicationFailure } from '../../activities/failures.js';
import { DEV_SERVER_DYNAMIC_CONFIG, ensureTemporalCli } from '../../scripts/runtime/temporal.js';
import { workflowSource } from '../../src/temporal/worker-factory.js';
import {
  AGENT_HANDLERS,
  type AgentQueueInput,
  type ArchiveRunsInput,
  type AgentQueueState,
  type CallToolInput,
  type CallToolOutput,
  type CancelRunResult,
  type EnqueueResult,
  endsRun,
  type FinishRunInput,
  type ModelTurnInput,
  type ModelTurnOutput,
  type RequestApprovalInput,
  type RunContext,
  type RunRequest,
  SEARCH_ATTRIBUTES,
  type SettleApprovalInput,
  type ToolResultBlock,
} from '../../workflows/contracts.js';
import type { agentQueueWorkflow } from '../../workflows/index.js';

export type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
export type QueueHandle = WorkflowHandle<typeof agentQueueWorkflow>;

/**
 * One dev server per test file, from the CLI the project caches (TEMPORAL_CLI_PATH, the tool cache,
 * then PATH), with the search attributes the workflows upsert and the dynamic config of the service's
 * own dev server (the same latency settings: a test waits less for each step).
 */
export async function startWorkflowEnvironment(): Promise<TestWorkflowEnvironment> {
  // The SDK's and its core's lines only for errors: the tests make activities fail and send big
  // payloads on purpose, which the SDK reports as warnings.
  if (Runtime._instance === undefined) {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  }
  const cli = await ensureTemporalCli((line) => console.log(`[workflow-tests] ${line}`));
  const extraArgs = Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      log: { format: 'pretty', level: 'error' },
      searchAttributes: Object.values(SEARCH_ATTRIBUTES).map((key) => defineSearchAttributeKey(key.name, key.type)),
      extraArgs,
    },
  });
}

/**
 * The file's dev server, started before its tests and torn down after them: call at the top of a
 * spec file; the returned function gives the environment inside a test.
 */
export function useWorkflowEnvironment(): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await startWorkflowEnvironment();
  }, 60_000);
  afterAll(async () => {
    await env?.teardown();
  });
  return () => {
    if (env === undefined) {
      throw new Error('the workflow environment is not started (useWorkflowEnvironment at the top of the file)');
    }
    return env;
  };
}

/** What a mocked activity was called with, in call order; `execution`: the Temporal run that called it. */
export interface ActivityCall {
  name: keyof Activities;
  runId: string;
  execution: string;
  input: unknown;
}

/**
 * One run of an execution's archive (archiveRuns' input), as the mock records it under `archiveRun`;
 * `executionRunId`: the execution that ran it, when the next one archives it.
 */
export type ArchivedRun = ArchiveRunsInput['runs'][number] & {
  agentId?: string;
  userId?: string;
  executionRunId?: string;
};

/**
 * The `executionSeconds` of a queue whose test waits for its runs' archive, which the queue writes
 * when it hands over: its runs end within it (or the rest go on in the next execution, archived at its
 * own hand-over), and the test does not wait long for it.
 */
export const HANDOVER_SECONDS = 3;

/** The model's answer to one turn, before the activity adds `context` (turn 1) and `ended`. */
export type ModelAnswer = Omit<ModelTurnOutput, 'context' | 'ended'>;

export interface ActivityScript {
  /** `turn`: the run's turns so far, this one included (1 = the run's first). */
  modelTurn?: (input: ModelTurnInput, turn: number) => Promise<ModelAnswer> | ModelAnswer;
  /** `attempt`: this tool call's calls so far in the run, this one included. */
  callTool?: (input: CallToolInput, attempt: number) => Promise<CallToolOutput> | CallToolOutput;
  finishRun?: (input: FinishRunInput) => Promise<void> | void;
  /** Called once per run of an execution's archive (archiveRuns, by the next execution), in order. */
  archiveRun?: (input: ArchivedRun) => Promise<void> | void;
  requestApproval?: (input: RequestApprovalInput) => Promise<void> | void;
  settleApproval?: (input: SettleApprovalInput) => Promise<void> | void;
  /** The context turn 1 returns (default CONTEXT). */
  context?: RunContext;
}

/** The context the first turn of every run returns: one tool on one site, one on an MCP server. */
export const CONTEXT: RunContext = {
  system: 'You are a test agent.',
  model: 'test-model',
  tools: [
    {
      name: 'lookup',
      description: 'Looks something up',
      input_schema: { type: 'object' },
      siteId: 'site-1',
      siteName: 'Test site',
      tool: 'lookup',
    },
    {
      name: 'docs__files_read',
      description: 'Reads a file (site: Docs)',
      input_schema: { type: 'object', properties: { path: { type: 'string' } } },
      siteId: 'site-2',
      siteName: 'Docs',
      tool: 'files.read',
      protocol: 'mcp',
    },
  ],
};

export function textAnswer(text: string): ModelAnswer {
  return {
    content: [{ type: 'text', text }],
    text,
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1 },
    credits: 0,
  };
}

export function toolUseAnswer(id: string, name = 'lookup', input: unknown = { q: id }): ModelAnswer {
  return {
    content: [{ type: 'tool_use', id, name, input }],
    text: '',
    stopReason: 'tool_use',
    usage: { inputTokens: 1, outputTokens: 1 },
    credits: 0,
  };
}

/**
 * The failure a tool call raises when the site (or our outgoing limit) asks to wait: built by the
 * activities' own classification from the coded error the tools port throws.
 */
export function rateLimited(retryAfterSeconds: number): unknown {
  const err = Object.assign(new Error(`Test site asked to wait ${retryAfterSeconds} s`), {
    code: 'OUTGOING_RATE_LIMITED',
    statusCode: 429,
    retryAfterSeconds,
  });
  return toApplicationFailure(err);
}

/** A failure of the kind an activity gives up with at once (not retried by Temporal). */
export function nonRetryable(message: string, type: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type, nonRetryable: true });
}

/**
 * The run activities as plain functions over `script` (by default: each run's one turn answers text
 * and ends it), recording every call. `modelTurn` marks the run ended as the real one does (endsRun
 * on the answer and `last`) and hands the context back on turn 1.
 */
export function mockActivities(script: ActivityScript = {}): {
  activities: Pick<
    Activities,
    'modelTurn' | 'callTool' | 'finishRun' | 'archiveRun' | 'archiveRuns' | 'requestApproval' | 'settleApproval'
  >;
  calls: ActivityCall[];
} {
  const calls: ActivityCall[] = [];
  const record = (name: keyof Activities, runId: string, input: unknown): number => {
    const execution = Context.current().info.workflowExecution?.runId ?? '';
    calls.push({ name, runId, execution, input: structuredClone(input) });
    return calls.filter((c) => c.name === name && c.runId === runId).length;
  };
  // A script that waits (for a gate the test opens) gives up when the activity is cancelled: a test
  // that fails before opening it still lets its worker shut down (which cancels what is in flight).
  const cancellable = async <T>(work: () => Promise<T> | T): Promise<T> =>
    Promise.race([Promise.resolve().then(work), Context.current().cancelled as Promise<never>]);
  return {
    calls,
    activities: {
      async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
        const turn = record('modelTurn', input.runId, input);
        const answer = await cancellable(() =>
          (script.modelTurn ?? (() => textAnswer(`done ${input.runId}`)))(input, turn),
        );
        return {
          ...answer,
          ...(input.start !== undefined ? { context: script.context ?? CONTEXT } : {}),
          ended: endsRun(answer, input.last),
        };
      },
      async callTool(input: CallToolInput): Promise<CallToolOutput> {
        const attempt = record('callTool', input.runId, input);
        return cancellable(
          () => script.callTool?.(input, attempt) ?? { result: { ok: attempt }, durationMs: 1, refreshed: false },
        );
      },
      async finishRun(input: FinishRunInput): Promise<void> {
        record('finishRun', input.runId, input);
        await cancellable(() => script.finishRun?.(input));
      },
      // Only histories of executions begun before 'archive-at-handover' call it (replayed, not run here).
      async archiveRun(input: FinishRunInput): Promise<void> {
        record('archiveRun', input.runId, input);
      },
      async archiveRuns(input: ArchiveRunsInput): Promise<void> {
        for (const run of input.runs) {
          const archived: ArchivedRun = {
            ...run,
            agentId: input.agentId,
            userId: input.userId,
            ...(input.executionRunId !== undefined ? { executionRunId: input.executionRunId } : {}),
          };
          record('archiveRun', run.runId, archived);
          await cancellable(() => script.archiveRun?.(archived));
        }
      },
      async requestApproval(input: RequestApprovalInput): Promise<void> {
        record('requestApproval', input.runId, input);
        await cancellable(() => script.requestApproval?.(input));
      },
      async settleApproval(input: SettleApprovalInput): Promise<void> {
        record('settleApproval', input.runId, input);
        await cancellable(() => script.settleApproval?.(input));
      },
    },
  };
}

/** A promise the test opens when it chooses (a mocked activity that waits for it stays in flight). */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Polls until `check` holds (or fails after `timeoutMs`, saying what it waited for). */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let counter = 0;
/** Ids unique across the tests of a file (each test gets its own task queue and workflow ids). */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** A webhook's run request (queued FIFO whatever the agent is doing). */
export function runRequest(agentId: string, runId: string, overrides: Partial<RunRequest> = {}): RunRequest {
  return {
    runId,
    agentId,
    userId: 'user-1',
    agentName: 'Test agent',
    triggeredBy: 'webhook',
    input: null,
    payload: null,
    actionOverride: null,
    deliveryId: null,
    mode: 'queue',
    requestedAt: new Date(0).toISOString(),
    ...overrides,
  };
}

/**
 * Runs `body` with a worker on its own task queue that runs the shipped workflow bundle (the worker's
 * own `workflowSource()`) over `activities`; the agent's queue workflow is started by `start`.
 */
export async function withQueueWorker<T>(
  env: TestWorkflowEnvironment,
  activities: ReturnType<typeof mockActivities>['activities'],
  body: (start: (input?: Partial<AgentQueueInput>) => Promise<QueueHandle>) => Promise<T>,
): Promise<T> {
  const taskQueue = uniqueId('wf-test');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    activities,
    ...workflowSource(),
    reuseV8Context: true,
    // The same bundle and sandbox, in this thread instead of a worker thread: a worker starts in about
    // 0.5 s instead of 2.5 s on a loaded machine (the thread loads the whole bundle). It also turns off
    // the deadlock detector, which no test here relies on.
    debugMode: true,
  });
  const started: QueueHandle[] = [];
  const start = async (input: Partial<AgentQueueInput> = {}): Promise<QueueHandle> => {
    const agentId = input.agentId ?? uniqueId('agent');
    const handle = await env.client.workflow.start<typeof agentQueueWorkflow>('agentQueueWorkflow', {
      taskQueue,
      workflowId: `agent-${agentId}`,
      // As the service starts a queue (agentQueueStart); a test of an older start passes it false.
      args: [{ archiveAfterHandover: true, ...input, agentId }],
      typedSearchAttributes: [
        { key: defineSearchAttributeKey(SEARCH_ATTRIBUTES.agentId.name, 'KEYWORD'), value: agentId },
        { key: defineSearchAttributeKey(SEARCH_ATTRIBUTES.userId.name, 'KEYWORD'), value: 'user-1' },
      ],
    });
    started.push(handle);
    return handle;
  };
  return worker.runUntil(async () => {
    try {
      return await body(start);
    } finally {
      // The queue waits for requests for ever: end it so the worker shuts down with nothing in flight.
      for (const handle of started) {
        await handle.terminate('test over').catch(() => undefined);
      }
    }
  });
}

/** The agent's id a queue handle serves (`agent-<agentId>`). */
export function agentIdOf(handle: QueueHandle): string {
  return handle.workflowId.replace(/^agent-/, '');
}

export async function enqueue(handle: QueueHandle, request: RunRequest): Promise<EnqueueResult> {
  return handle.executeUpdate<EnqueueResult, [RunRequest]>(AGENT_HANDLERS.enqueueRun, { args: [request] });
}

export async function cancelRun(handle: QueueHandle, runId: string): Promise<CancelRunResult> {
  return handle.executeUpdate<CancelRunResult, [string]>(AGENT_HANDLERS.cancelRun, { args: [runId] });
}

export async function queueState(handle: QueueHandle): Promise<AgentQueueState> {
  return handle.query<AgentQueueState>(AGENT_HANDLERS.agentState);
}

/** The inputs one activity was called with, in order; only `runId`'s when given. */
export function inputsOf<T>(calls: ActivityCall[], name: ActivityCall['name'], runId?: string): T[] {
  return calls.filter((c) => c.name === name && (runId === undefined || c.runId === runId)).map((c) => c.input as T);
}

/**
 * The inputs of a local activity (finishRun, archiveRun), each once. Temporal runs a local activity
 * at least once: a workflow task that does not complete (timed out or failed under load, or the
 * execution evicted from the worker's cache) before it records the activity's marker runs it again on
 * replay, with the same input. The service's side of each is idempotent; a test asserts what was asked,
 * and that any repeat asked the same (a repeat with another input is kept, and fails the test).
 */
export function localInputsOf<T>(calls: ActivityCall[], name: 'finishRun' | 'archiveRun', runId?: string): T[] {
  const seen = new Set<string>();
  return inputsOf<T>(calls, name, runId).filter((input) => {
    const key = JSON.stringify(input);
    const first = !seen.has(key);
    seen.add(key);
    return first;
  });
}

/** The tool results the model was given on its last turn (of `runId` when given). */
export function lastToolResults(calls: ActivityCall[], runId?: string): ToolResultBlock[] {
  const last = inputsOf<ModelTurnInput>(calls, 'modelTurn', runId).at(-1)!.messages.at(-1)!;
  expect(last.role).toBe('user');
  return last.content as ToolResultBlock[];
}

/**
 * Runs `runs` (suffixes of the agent's id) through one agent's queue over `mock`'s activities;
 * `during` drives them once enqueued; returns once as many runs are archived (those it enqueued, or
 * others `during` did), which the queue does when it hands over (HANDOVER_SECONDS after the first run);
 * the handle returned is the execution that ran the first run.
 */
export async function runThroughQueue(
  env: TestWorkflowEnvironment,
  mock: ReturnType<typeof mockActivities>,
  runs: string[] = ['1'],
  during?: (queue: { handle: QueueHandle; ids: string[]; calls: ActivityCall[] }) => Promise<void>,
): Promise<{ calls: ActivityCall[]; ids: string[]; handle: QueueHandle }> {
  return withQueueWorker(env, mock.activities, async (start) => {
    const handle = await start({ executionSeconds: HANDOVER_SECONDS });
    const agentId = agentIdOf(handle);
    const ids = runs.map((suffix) => `${agentId}-${suffix}`);
    for (const runId of ids) {
      await enqueue(handle, runRequest(agentId, runId));
    }
    const firstExecution = (await handle.describe()).runId;
    await during?.({ handle, ids, calls: mock.calls });
    await until(`${ids.length} runs archived`, () => runsCalled(mock.calls, 'archiveRun').length >= ids.length);
    // The execution that ran the first run (the queue has handed over since): its history is the run's.
    return {
      calls: mock.calls,
      ids,
      handle: handle.client.getHandle(handle.workflowId, firstExecution) as QueueHandle,
    };
  });
}

/** The calls of one activity, in order, as `runId`s. */
export function runsCalled(calls: ActivityCall[], name: keyof Activities): string[] {
  return calls.filter((c) => c.name === name).map((c) => c.runId);
}

/** Each call as `name:runId`, in call order (what ran when). */
export function sequence(calls: ActivityCall[]): string[] {
  return calls.map((c) => `${c.name}:${c.runId}`);
}

/** The sequence without the archive (written at hand-overs, whose place depends on timing). */
export function runSteps(calls: ActivityCall[]): string[] {
  return sequence(calls.filter((c) => c.name !== 'archiveRun'));
}

export async function historyOf(handle: QueueHandle, execution?: string): Promise<HistoryEvent[]> {
  const target = execution === undefined ? handle : handle.client.getHandle(handle.workflowId, execution);
  return (await target.fetchHistory()).events ?? [];
}

/**
 * The execution's history replays under the shipped bundle without nondeterminism: the paths the
 * test drove (waits, cancellations, continue-as-new) are deterministic.
 */
export async function expectReplays(handle: QueueHandle, execution?: string): Promise<void> {
  const target = execution === undefined ? handle : handle.client.getHandle(handle.workflowId, execution);
  const history = await target.fetchHistory();
  await Worker.runReplayHistory({ ...workflowSource(), replayName: handle.workflowId }, history);
}

/** The timers an execution started, in order: their length in seconds and their summary. */
export function timersOf(events: HistoryEvent[]): Array<{ seconds: number; summary: unknown }> {
  return events
    .filter((e) => e.timerStartedEventAttributes)
    .map((e) => ({
      seconds: Number(e.timerStartedEventAttributes!.startToFireTimeout?.seconds ?? 0),
      summary: e.userMetadata?.summary ? defaultPayloadConverter.fromPayload(e.userMetadata.summary) : undefined,
    }));
}

/** The input an execution that continued as new handed the next one (undefined if it did not). */
export function continuedAsNewWith(events: HistoryEvent[]): AgentQueueInput | undefined {
  const last = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes;
  const payload = last?.input?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<AgentQueueInput>(payload) : undefined;
}

/** The run ids each `AgentRunIds` upsert of an execution's history listed, in order. */
export function runIdsUpserts(events: HistoryEvent[]): string[][] {
  return events
    .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentRunIds)
    .filter((payload) => payload !== undefined && payload !== null)
    .map((payload) => defaultPayloadConverter.fromPayload<string[]>(payload!));
}

/** Polls until each run has started and left the queue (ended: neither active nor queued). */
export async function untilRunsEnded(handle: QueueHandle, calls: ActivityCall[], ids: string[]): Promise<void> {
  await until(`runs ${ids.join(', ')} ended`, async () => {
    if (!ids.every((id) => calls.some((c) => c.runId === id))) {
      return false;
    }
    const state = await queueState(handle);
    return !ids.some((id) => id === state.activeRunId || state.queuedRunIds.includes(id));
  });
}
