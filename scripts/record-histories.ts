/**
 * Records the workflow histories test/workflows/replay.workflow-spec.ts replays (test/fixtures/histories,
 * the wire encoding of `handle.fetchHistory()` in base64) from today's workflow bundles:
 *
 *   npx tsc -p tsconfig.build.json && node dist/scripts/bundle-workflows.js
 *   node dist/scripts/record-histories.js [--out <dir>]
 *
 * It starts a Temporal dev server of its own (the cached CLI, in memory, on a free port) and, for each
 * bundle the worker may run (plain, and traced as with OTEL_EXPORTER_OTLP_ENDPOINT), a worker of that
 * bundle with stand-in activities, then drives agent queues as the API does (update-with-start for
 * manual runs, signal-with-start for webhooks, the cancel and decideApproval Updates) and saves each
 * queue's history at the moment named: a run completed (with a tool call), a run failed, a run active
 * with a webhook queued behind it, a queue idle after runs (webhook, manual, one cancelled while
 * active, one taken out of the queue), a run whose call waits for a decision, the same run once
 * approved and completed, and an execution that handed over after its runs (archived in one step,
 * 'archive-at-handover'). Then it fires scheduled triggers as an agent's schedule does and saves
 * one waiting for its run's end, one ended, one skipped (`scheduled-trigger-<how it asked>-…`). No
 * database, model or site: the activities answer as scripted below. A history kept from older code
 * is not recorded again: record into `--out` elsewhere and copy only the new scenarios' files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { Client, Connection, type WorkflowHandle, WithStartWorkflowOperation } from '@temporalio/client';
import { ApplicationFailure, WorkflowIdConflictPolicy } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { agentQueueStart } from '../src/temporal/agent-queue-start.js';
import { workflowSource } from '../src/temporal/worker-factory.js';
import type { Activities } from '../activities/index.js';
import {
  type AgentQueueInput,
  AGENT_HANDLERS,
  type CallToolInput,
  type CallToolOutput,
  type DecideApprovalInput,
  type EnqueueResult,
  type ModelTurnInput,
  type ModelTurnOutput,
  type RunRequest,
} from '../workflows/contracts.js';
import type { agentQueueWorkflow } from '../workflows/agent-queue.workflow.js';
import { answerHelp } from './runtime/command-line.js';
import { freePort } from './runtime/processes.js';
import { ensureTemporalCli, startTemporalDevServer } from './runtime/temporal.js';

type EventType = proto.temporal.api.enums.v1.EventType;
const EventType = proto.temporal.api.enums.v1.EventType;
type History = proto.temporal.api.history.v1.IHistory;

const NAMESPACE = 'default';
const USER = '22222222-2222-4222-8222-222222222222';
const TOOL = { name: 'notes__create_note', siteId: '33333333-3333-4333-8333-333333333333', siteName: 'Notes' };
/** The run's tool set as today's workflows carry it: its sha256 (run_tool_sets), never its tools. */
const TOOL_SET_HASH = 'c'.repeat(64);

/**
 * How a run's model turns answer: `tool` asks for a tool first; `approval` too, under a policy that
 * waits for a decision on it; `hold` waits until released or cancelled.
 */
type Turns = 'text' | 'tool' | 'approval' | 'fail' | 'hold';

/** Stand-ins for the activities the agent's queue runs, scripted per run. */
class FakeActivities {
  readonly scripts = new Map<string, Turns>();
  private readonly holds = new Map<string, () => void>();
  private readonly held = new Map<string, () => void>();
  readonly heldNow = new Set<string>();
  /** Run id → the approval its wait asked for (requestApproval's input). */
  readonly approvals = new Map<string, string>();

  /** Resolves once the run's held model turn has begun. */
  whenHeld(runId: string): Promise<void> {
    return this.heldNow.has(runId) ? Promise.resolve() : new Promise((resolve) => this.held.set(runId, resolve));
  }

  release(runId: string): void {
    this.holds.get(runId)?.();
  }

  /** Agents whose scheduled trigger is told its firing was skipped (the agent was busy). */
  readonly busyAgents = new Set<string>();
  /** Agent id → the run its scheduled trigger was given. */
  readonly scheduledRuns = new Map<string, string>();

  activities(): Pick<
    Activities,
    | 'modelTurn'
    | 'callTool'
    | 'finishRun'
    | 'archiveRun'
    | 'archiveRuns'
    | 'requestApproval'
    | 'settleApproval'
    | 'enqueueScheduledRun'
    | 'dropSkippedScheduledRun'
  > {
    return {
      dropSkippedScheduledRun: async () => undefined,
      enqueueScheduledRun: async (input) => {
        if (this.busyAgents.has(input.agentId)) {
          return { skipped: 'the agent had a queued or active run' };
        }
        const runId = uuid(4);
        this.scheduledRuns.set(input.agentId, runId);
        return { runId };
      },
      modelTurn: (input: ModelTurnInput) => this.modelTurn(input),
      callTool: async (input: CallToolInput): Promise<CallToolOutput> => ({
        result: { id: `note-${input.runId.slice(0, 4)}`, title: 'Standup' },
        durationMs: 3,
        refreshed: false,
      }),
      finishRun: async () => undefined,
      archiveRun: async () => undefined,
      archiveRuns: async () => undefined,
      requestApproval: async (input) => {
        this.approvals.set(input.runId, input.approvalId);
      },
      settleApproval: async () => undefined,
    };
  }

  private async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
    const script = this.scripts.get(input.runId) ?? 'text';
    const policy = script === 'approval' ? { approvals: { scopes: ['write' as const], timeoutSeconds: 3600 } } : {};
    const tool = {
      ...TOOL,
      tool: 'create_note',
      description: 'Creates a note',
      input_schema: { type: 'object' },
      scope: 'write' as const,
    };
    // A workflow that asks for tool sets (patched 'run-tool-sets') gets the set's hash, and each tool
    // answer the route of its tool; an older one the system prompt and the tools themselves.
    const byHash = input.toolSets === true || input.context?.toolSet !== undefined;
    const context =
      input.start === undefined
        ? undefined
        : byHash
          ? { model: 'claude-sonnet-4-5', toolSet: TOOL_SET_HASH, ...policy }
          : { system: 'Take notes.', model: 'claude-sonnet-4-5', tools: [tool], ...policy };
    const { description: _d, input_schema: _s, ...route } = tool;
    const usage = { inputTokens: 100, outputTokens: 20 };
    if (script === 'fail') {
      throw ApplicationFailure.nonRetryable('The model refused the request', 'MODEL_ERROR');
    }
    if (script === 'hold') {
      const ctx = Context.current();
      const heartbeat = setInterval(() => ctx.heartbeat(), 200);
      try {
        this.heldNow.add(input.runId);
        this.held.get(input.runId)?.();
        await Promise.race([new Promise<void>((resolve) => this.holds.set(input.runId, resolve)), ctx.cancelled]);
      } finally {
        clearInterval(heartbeat);
        this.heldNow.delete(input.runId);
      }
    }
    if ((script === 'tool' || script === 'approval') && input.messages.length === 0) {
      return {
        content: [{ type: 'tool_use', id: 'toolu_1', name: TOOL.name, input: { title: 'Standup' } }],
        text: '',
        stopReason: 'tool_use',
        usage,
        credits: 1,
        context,
        ...(byHash ? { routes: [route] } : {}),
        ended: false,
      };
    }
    return {
      content: [{ type: 'text', text: 'Done.' }],
      text: 'Done.',
      stopReason: 'end_turn',
      usage,
      credits: 1,
      ...(context !== undefined ? { context } : {}),
      ended: true,
    };
  }
}

let sequence = 0;
function uuid(kind: number): string {
  sequence += 1;
  return `${kind}${kind}${kind}${kind}${kind}${kind}${kind}${kind}-0000-4000-8000-${String(sequence).padStart(12, '0')}`;
}

/** A schedule's firing's request, as its activity signals it (the firing's trigger told of its end or skip). */
function firing(agentId: string): RunRequest {
  return {
    ...request(agentId, 'webhook'),
    triggeredBy: 'schedule',
    deliveryId: null,
    mode: 'skip_if_busy',
    notifyWorkflowId: `scheduled-${agentId}-2026-11-27T09:00:00Z`,
  };
}

function request(agentId: string, triggeredBy: 'manual' | 'webhook'): RunRequest {
  return {
    runId: uuid(4),
    agentId,
    userId: USER,
    agentName: 'Recorder',
    triggeredBy,
    input: null,
    payload: null,
    actionOverride: null,
    deliveryId: triggeredBy === 'webhook' ? uuid(5) : null,
    mode: triggeredBy === 'webhook' ? 'queue' : 'reject_if_busy',
    requestedAt: new Date().toISOString(),
  };
}

/** One bundle's worker and client, and the queues it drives. */
class Recorder {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
    readonly fakes: FakeActivities,
  ) {}

  /** Executions of the queue last this long, unless `executionSeconds` says otherwise for an agent. */
  readonly executionSeconds = new Map<string, number>();

  /** Agents whose queue starts as the service started one before `archiveAfterHandover` existed. */
  readonly startedWithoutArchiveAfterHandover = new Set<string>();

  private start(agentId: string) {
    const options = agentQueueStart(
      { id: agentId, userId: USER, name: 'Recorder' },
      { temporalTaskQueue: this.taskQueue, agentQueueExecutionSeconds: this.executionSeconds.get(agentId) ?? 600 },
    );
    if (this.startedWithoutArchiveAfterHandover.has(agentId)) {
      const [input] = options.args as [AgentQueueInput];
      const { archiveAfterHandover: _dropped, ...before } = input;
      options.args = [before];
    }
    return options;
  }

  /** Resolves once the queue runs nothing and holds nothing (a Query: nothing written to the history). */
  async idle(agentId: string): Promise<boolean> {
    const state = await this.handle(agentId).query<{ activeRunId: string | null; queuedRunIds: string[] }>(
      AGENT_HANDLERS.agentState,
    );
    return state.activeRunId === null && state.queuedRunIds.length === 0;
  }

  manual(agentId: string, runId: RunRequest): Promise<EnqueueResult> {
    return this.client.workflow.executeUpdateWithStart<typeof agentQueueWorkflow, EnqueueResult, [RunRequest]>(
      AGENT_HANDLERS.enqueueRun,
      {
        args: [runId],
        updateId: `run-${runId.runId}`,
        startWorkflowOperation: new WithStartWorkflowOperation('agentQueueWorkflow', {
          ...this.start(agentId),
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        }),
      },
    );
  }

  async webhook(agentId: string, run: RunRequest): Promise<void> {
    await this.client.workflow.signalWithStart('agentQueueWorkflow', {
      ...this.start(agentId),
      signal: AGENT_HANDLERS.enqueueRunSignal,
      signalArgs: [run],
    });
  }

  handle(agentId: string): WorkflowHandle {
    return this.client.workflow.getHandle(`agent-${agentId}`);
  }

  /**
   * The queue's history once `ready` holds and the queue has nothing more to do: no workflow task
   * pending, and no new event for a while (a local activity's marker closes a task, so the last
   * event may be one).
   */
  settled(
    agentId: string,
    ready: (count: (type: EventType) => number) => boolean | Promise<boolean>,
    execution?: string,
  ): Promise<History> {
    return this.settledWorkflow(`agent-${agentId}`, ready, execution);
  }

  /** As settled, for any workflow. */
  async settledWorkflow(
    workflowId: string,
    ready: (count: (type: EventType) => number) => boolean | Promise<boolean>,
    execution?: string,
  ): Promise<History> {
    const deadline = Date.now() + 30_000;
    let previous = -1;
    for (;;) {
      const history = await this.client.workflow.getHandle(workflowId, execution).fetchHistory();
      const events = history.events ?? [];
      // A patch's marker (patched(), markerName core_patch) is not a local activity's: not counted.
      const count = (type: EventType): number =>
        events.filter((e) => e.eventType === type && e.markerRecordedEventAttributes?.markerName !== 'core_patch')
          .length;
      const last = events.at(-1)?.eventType;
      const idle =
        last !== EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED && last !== EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED;
      if ((await ready(count)) && idle && events.length === previous) {
        return history;
      }
      previous = events.length;
      if (Date.now() > deadline) {
        const types = events.map((e) => EventType[e.eventType!]?.replace('EVENT_TYPE_', ''));
        throw new Error(`${workflowId}: the history did not reach the state asked for in 30 s: ${types.join(' ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}

const MARKERS = EventType.EVENT_TYPE_MARKER_RECORDED;
const SIGNALS = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;
const UPDATES_DONE = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED;
const TIMERS = EventType.EVENT_TYPE_TIMER_STARTED;
const CONTINUED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW;
const ACTIVITIES_DONE = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED;
/** A signal the workflow sent that the server has settled (to a workflow that does not exist here: failed). */
const SENT = [
  EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED,
  EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
];

/** The histories of one bundle, by the name they are saved under (without bundle and extension). */
async function scenarios(rec: Recorder): Promise<Record<string, History>> {
  const histories: Record<string, History> = {};
  const { fakes } = rec;

  // A manual run with a tool call, completed (archived at the execution's hand-over, later).
  const completed = uuid(1);
  const run1 = request(completed, 'manual');
  fakes.scripts.set(run1.runId, 'tool');
  await rec.manual(completed, run1);
  histories['run-completed'] = await rec.settled(completed, () => rec.idle(completed));

  // A manual run whose model turn fails: the failure recorded (finishRun, a local activity).
  const failed = uuid(1);
  const run2 = request(failed, 'manual');
  fakes.scripts.set(run2.runId, 'fail');
  await rec.manual(failed, run2);
  histories['run-failed'] = await rec.settled(failed, async (n) => n(MARKERS) === 1 && (await rec.idle(failed)));

  // A webhook run active, a second webhook queued behind it.
  const busy = uuid(1);
  const active = request(busy, 'webhook');
  const queued = request(busy, 'webhook');
  fakes.scripts.set(active.runId, 'hold');
  await rec.webhook(busy, active);
  await fakes.whenHeld(active.runId);
  await rec.webhook(busy, queued);
  histories['run-active-and-queued'] = await rec.settled(busy, (n) => n(SIGNALS) === 2);

  // The same queue goes on: both webhooks' runs end, a manual run with a tool call, then a manual run
  // held with a webhook queued behind it: the queued one taken out (cancelQueuedRun), the held one
  // cancelled (cancelRun). Idle after it all.
  fakes.release(active.runId);
  await rec.settled(busy, () => rec.idle(busy));
  const manual = request(busy, 'manual');
  fakes.scripts.set(manual.runId, 'tool');
  await rec.manual(busy, manual);
  await rec.settled(busy, async (n) => n(UPDATES_DONE) === 1 && (await rec.idle(busy)));
  const held = request(busy, 'manual');
  const behind = request(busy, 'webhook');
  fakes.scripts.set(held.runId, 'hold');
  await rec.manual(busy, held);
  await fakes.whenHeld(held.runId);
  await rec.webhook(busy, behind);
  await rec.settled(busy, (n) => n(SIGNALS) === 3);
  const handle = rec.handle(busy);
  const dequeued = await handle.executeUpdate<boolean, [string]>(AGENT_HANDLERS.cancelQueuedRun, {
    args: [behind.runId],
  });
  const cancelled = await handle.executeUpdate<string, [string]>(AGENT_HANDLERS.cancelRun, { args: [held.runId] });
  if (dequeued !== true || cancelled !== 'cancelled') {
    throw new Error(`the cancels answered ${String(dequeued)} and ${cancelled}`);
  }
  // The cancelled one recorded its end (finishRun); none archived yet (at the hand-over).
  histories['idle-after-runs'] = await rec.settled(busy, (n) => n(MARKERS) === 1 && n(UPDATES_DONE) === 4);

  // Schedules' firings (signals, skip_if_busy): one while a webhook run is active, skipped (its firing
  // told, runSkipped), then one at the idle queue, run (its firing told of its end, runEnded).
  const fired = uuid(1);
  const running = request(fired, 'webhook');
  fakes.scripts.set(running.runId, 'hold');
  await rec.webhook(fired, running);
  await fakes.whenHeld(running.runId);
  await rec.webhook(fired, firing(fired));
  const sent = (n: (type: EventType) => number): number => SENT.reduce((sum, type) => sum + n(type), 0);
  histories['scheduled-skipped'] = await rec.settled(fired, (n) => n(SIGNALS) === 2 && sent(n) === 1);
  fakes.release(running.runId);
  await rec.settled(fired, () => rec.idle(fired));
  await rec.webhook(fired, firing(fired));
  histories['scheduled-ran'] = await rec.settled(
    fired,
    async (n) => n(SIGNALS) === 3 && sent(n) === 2 && (await rec.idle(fired)),
  );

  // A manual run whose tool call waits for a decision (the execution's age timer and the wait's), then
  // approved (the decideApproval Update), the call made, the run completed and archived.
  const careful = uuid(1);
  const waiting = request(careful, 'manual');
  fakes.scripts.set(waiting.runId, 'approval');
  await rec.manual(careful, waiting);
  histories['run-awaiting-approval'] = await rec.settled(careful, (n) => n(TIMERS) === 2);
  const decided = await rec
    .handle(careful)
    .executeUpdate<string, [DecideApprovalInput]>(AGENT_HANDLERS.decideApproval, {
      args: [
        {
          runId: waiting.runId,
          approvalId: fakes.approvals.get(waiting.runId)!,
          decision: 'approve',
          note: 'Fine',
          by: { userId: USER, name: 'Recorder' },
        },
      ],
    });
  if (decided !== 'approved') {
    throw new Error(`the decision answered ${decided}`);
  }
  histories['run-approved'] = await rec.settled(
    careful,
    async (n) => n(UPDATES_DONE) === 2 && (await rec.idle(careful)),
  );

  // An execution's hand-over ('archive-at-handover'): a manual run with a tool call, a failed one, a
  // webhook run held with two webhooks queued behind it (listed in one upsert with it), then the
  // execution's age: the runs archived in one local activity, and the queue continued as new.
  const handover = uuid(1);
  rec.executionSeconds.set(handover, 8);
  rec.startedWithoutArchiveAfterHandover.add(handover);
  const runs = [request(handover, 'manual'), request(handover, 'manual')];
  fakes.scripts.set(runs[0]!.runId, 'tool');
  fakes.scripts.set(runs[1]!.runId, 'fail');
  for (const run of runs) {
    await rec.manual(handover, run);
    await rec.settled(handover, () => rec.idle(handover));
  }
  const execution = (await rec.handle(handover).describe()).runId;
  const burst = [request(handover, 'webhook'), request(handover, 'webhook'), request(handover, 'webhook')];
  fakes.scripts.set(burst[0]!.runId, 'hold');
  await rec.webhook(handover, burst[0]!);
  await fakes.whenHeld(burst[0]!.runId);
  await rec.webhook(handover, burst[1]!);
  await rec.webhook(handover, burst[2]!);
  await rec.settled(handover, (n) => n(SIGNALS) === 3);
  fakes.release(burst[0]!.runId);
  histories['handover-runs-archived'] = await rec.settled(handover, (n) => n(CONTINUED) === 1, execution);

  // An execution started with archiveAfterHandover (every start since): at its age a completed and a
  // failed run hand over, carried in the continue-as-new's input (no local activity); the next
  // execution archives them in an activity as it begins, beside a webhook run that arrived meanwhile.
  const after = uuid(1);
  rec.executionSeconds.set(after, 8);
  const ran = [request(after, 'manual'), request(after, 'manual')];
  fakes.scripts.set(ran[0]!.runId, 'tool');
  fakes.scripts.set(ran[1]!.runId, 'fail');
  for (const run of ran) {
    await rec.manual(after, run);
    await rec.settled(after, () => rec.idle(after));
  }
  const handedOver = (await rec.handle(after).describe()).runId;
  histories['after-handover-continued'] = await rec.settled(after, (n) => n(CONTINUED) === 1, handedOver);
  await rec.webhook(after, request(after, 'webhook'));
  histories['after-handover-archived'] = await rec.settled(
    after,
    async (n) => n(SIGNALS) === 1 && n(ACTIVITIES_DONE) === 2 && (await rec.idle(after)),
  );
  return histories;
}

/**
 * The histories of one bundle's scheduled triggers (what an agent's Temporal Schedule starts, under the
 * id the schedule gives it), in each of the two ways a trigger asks for its run (`activity-`, and
 * `local-` for a schedule whose input says localRequest): one waiting for its run's end, the same once
 * told the run ended, a firing skipped at once (the agent busy), and one whose run the queue skipped
 * (it dropped the run's row).
 */
async function triggerScenarios(rec: Recorder): Promise<Record<string, History>> {
  const histories: Record<string, History> = {};
  for (const shape of ['activity', 'local'] as const) {
    const fire = (agentId: string) =>
      rec.client.workflow.start('scheduledTriggerWorkflow', {
        workflowId: `scheduled-${agentId}-2026-11-27T09:00:00Z`,
        taskQueue: rec.taskQueue,
        args: [shape === 'local' ? { agentId, localRequest: true } : { agentId }],
      });
    const asked = (n: (type: EventType) => number): number => n(ACTIVITIES_DONE) + n(MARKERS);
    const ran = uuid(1);
    const waiting = await fire(ran);
    histories[`${shape}-waiting`] = await rec.settledWorkflow(waiting.workflowId, (n) => asked(n) === 1);
    await waiting.signal(AGENT_HANDLERS.runEnded, rec.fakes.scheduledRuns.get(ran)!);
    await waiting.result();
    histories[`${shape}-ended`] = await rec.settledWorkflow(waiting.workflowId, (n) => n(SIGNALS) === 1);
    const busy = uuid(1);
    rec.fakes.busyAgents.add(busy);
    const skipped = await fire(busy);
    await skipped.result();
    histories[`${shape}-skipped`] = await rec.settledWorkflow(skipped.workflowId, (n) => asked(n) === 1);
    const dropping = uuid(1);
    const dropped = await fire(dropping);
    await rec.settledWorkflow(dropped.workflowId, (n) => asked(n) === 1);
    await dropped.signal(AGENT_HANDLERS.runSkipped, rec.fakes.scheduledRuns.get(dropping)!);
    await dropped.result();
    histories[`${shape}-dropped`] = await rec.settledWorkflow(dropped.workflowId, (n) => asked(n) === 2);
  }
  return histories;
}

answerHelp(
  [
    'usage: node dist/scripts/record-histories.js [--out <dir>]',
    '',
    'Records the workflow histories test/workflows/replay.workflow-spec.ts replays, from the bundles',
    'in dist/ (run node dist/scripts/bundle-workflows.js first), on a Temporal dev server of its own.',
    '  --out <dir>  where to write them (default test/fixtures/histories)',
  ].join('\n'),
);

async function main(): Promise<void> {
  const outIndex = process.argv.indexOf('--out');
  const out = path.resolve(outIndex > 0 ? process.argv[outIndex + 1]! : path.join('test', 'fixtures', 'histories'));
  mkdirSync(out, { recursive: true });
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cliPath = await ensureTemporalCli((line) => console.log(line));
  const temporal = await startTemporalDevServer({
    cliPath,
    port: await freePort(),
    namespace: NAMESPACE,
    logFile: path.resolve('.data', 'record-histories', 'temporal.log'),
  });
  // Requests of the traced bundle carry a trace header, as the API's do with tracing on.
  const provider = new BasicTracerProvider();
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const written: string[] = [];
  try {
    for (const traced of [false, true]) {
      const taskQueue = `record-${traced ? 'traced' : 'plain'}`;
      const connection = await Connection.connect({ address: temporal.address });
      const client = new Client({
        connection,
        namespace: NAMESPACE,
        ...(traced ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
      });
      const nativeConnection = await NativeConnection.connect({ address: temporal.address });
      const fakes = new FakeActivities();
      const worker = await Worker.create({
        connection: nativeConnection,
        namespace: NAMESPACE,
        taskQueue,
        activities: fakes.activities(),
        ...workflowSource(false, traced),
        ...(traced ? { sinks: { exporter: { export: { fn: () => undefined } } } } : {}),
      });
      const recorder = new Recorder(client, taskQueue, fakes);
      const histories = await worker.runUntil(async () => ({
        ...Object.fromEntries(Object.entries(await scenarios(recorder)).map(([n, h]) => [`agent-queue-${n}`, h])),
        ...Object.fromEntries(
          Object.entries(await triggerScenarios(recorder)).map(([n, h]) => [`scheduled-trigger-${n}`, h]),
        ),
      }));
      for (const [name, history] of Object.entries(histories)) {
        const [kind, rest] = name.startsWith('agent-queue-')
          ? ['agent-queue-', name.slice('agent-queue-'.length)]
          : ['scheduled-trigger-', name.slice('scheduled-trigger-'.length)];
        const file = path.join(out, `${kind}${traced ? 'traced-' : ''}${rest}.b64`);
        writeFileSync(
          file,
          Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish()).toString('base64'),
        );
        written.push(path.relative(process.cwd(), file));
      }
      await connection.close();
      await nativeConnection.close();
    }
  } finally {
    await temporal.stop();
    await provider.shutdown();
  }
  console.log(`written:\n  ${written.join('\n  ')}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
