import { describe, expect, it, jest } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type {
  ModelTurnInput,
  ModelTurnOutput,
  RunContext,
  RunRequest,
  RunTool,
  RunToolSet,
} from '../workflows/contracts.js';
import { type ActivityDeps, createActivities } from './index.js';

const RUN = '6f1c1f4e-2d55-4a55-9d1e-0f4c5b8a7e01';
const OWNER = '0b7e6a3c-7f0f-4a5e-8a8e-3c9d1c2b4a11';
const OTHER = '9a2d4c6e-1b3f-4e5a-8c7d-2f1e0d9c8b22';

function request(): RunRequest {
  return {
    runId: RUN,
    agentId: 'd4c3b2a1-0f9e-4d8c-b7a6-5e4d3c2b1a00',
    userId: OWNER,
    agentName: 'a',
    triggeredBy: 'manual',
    input: null,
    payload: null,
    actionOverride: null,
    deliveryId: null,
    mode: 'reject_if_busy',
    requestedAt: new Date(0).toISOString(),
  };
}

const HASH = 'a'.repeat(64);
const TOOL = (name: string): RunTool => ({
  name,
  description: `DESCRIPTION of ${name}`,
  input_schema: { type: 'object', properties: { q: { type: 'string', description: 'SCHEMA' } } },
  siteId: 'site-1',
  siteName: 'Notes',
  tool: name.replace('notes__', ''),
  scope: 'write',
});
const SET: RunToolSet = { system: 'SYSTEM PROMPT', tools: [TOOL('notes__create'), TOOL('notes__list')] };

function deps(answer: 'text' | 'tool' = 'text') {
  const context: RunContext = { model: 'm', toolSet: HASH };
  const startRun = jest.fn<ActivityDeps['runs']['startRun']>(async () => ({
    context,
    toolSet: SET,
    trigger: 'Run now.',
  }));
  const toolSet = jest.fn<ActivityDeps['runs']['toolSet']>(async () => SET);
  const turn = jest.fn<ActivityDeps['model']['turn']>(async () =>
    answer === 'text'
      ? {
          content: [{ type: 'text' as const, text: 'ok' }],
          text: 'ok',
          stopReason: 'end_turn',
          usage: { inputTokens: 1, outputTokens: 1 },
          credits: 1,
        }
      : {
          content: [
            { type: 'tool_use' as const, id: 't1', name: 'notes__create', input: {} },
            { type: 'tool_use' as const, id: 't2', name: 'notes__nope', input: {} },
            { type: 'tool_use' as const, id: 't3', name: 'notes__create', input: {} },
          ],
          text: '',
          stopReason: 'tool_use',
          usage: { inputTokens: 1, outputTokens: 1 },
          credits: 1,
        },
  );
  const finishRun = jest.fn(async () => undefined);
  const all = {
    workerIdentity: 'test',
    runs: { startRun, finishRun, toolSet, enqueueScheduledRun: jest.fn() },
    model: { turn },
    tools: { call: jest.fn() },
  } as unknown as ActivityDeps;
  return { all, startRun, turn, toolSet };
}

describe('modelTurn (turn 1)', () => {
  const env = () =>
    new MockActivityEnvironment({ workflowExecution: { workflowId: `agent-${request().agentId}`, runId: 'exec-1' } });

  it('passes the asking workflow execution (from Temporal, not the input) to startRun', async () => {
    const { all, startRun, turn } = deps();
    const input: ModelTurnInput = { runId: RUN, userId: OWNER, messages: [], start: request(), last: false };
    await env().run(createActivities(all).modelTurn, input);
    expect(startRun).toHaveBeenCalledWith(request(), { workflowId: `agent-${request().agentId}`, runId: 'exec-1' });
    expect(turn).toHaveBeenCalledTimes(1);
  });

  it("puts the run's trigger, as startRun read it from the row, first in the model's messages, and never in its answer", async () => {
    const { all, turn } = deps();
    const later = { role: 'assistant' as const, content: 'earlier' };
    const input: ModelTurnInput = {
      runId: RUN,
      userId: OWNER,
      messages: [later],
      start: request(),
      last: false,
    };
    const output = (await env().run(createActivities(all).modelTurn, input)) as ModelTurnOutput;
    expect(turn.mock.calls[0]![0]).toMatchObject({ messages: [{ role: 'user', content: 'Run now.' }, later] });
    expect(turn.mock.calls[0]![0]).not.toHaveProperty('triggerFromRow');
    expect(JSON.stringify(output)).not.toContain('Run now.');
  });

  it('asks a later turn to read the trigger from the row', async () => {
    const context: RunContext = { system: 's', model: 'm', tools: [] };
    const { all, startRun, turn } = deps();
    const input: ModelTurnInput = {
      runId: RUN,
      userId: OWNER,
      messages: [{ role: 'assistant', content: 'earlier' }],
      context,
      last: false,
    };
    await env().run(createActivities(all).modelTurn, input);
    expect(startRun).not.toHaveBeenCalled();
    expect((turn.mock.calls[0]![0] as { triggerFromRow?: boolean }).triggerFromRow).toBe(true);
    expect(turn.mock.calls[0]![0]).toMatchObject({ messages: [{ role: 'assistant', content: 'earlier' }] });
  });

  it('gives a workflow that asks for tool sets the hash and no tool definition or system prompt', async () => {
    const { all, turn } = deps('tool');
    const input: ModelTurnInput = {
      runId: RUN,
      userId: OWNER,
      messages: [],
      start: request(),
      toolSets: true,
      last: false,
    };
    const output = (await env().run(createActivities(all).modelTurn, input)) as ModelTurnOutput;
    expect(output.context).toEqual({ model: 'm', toolSet: HASH });
    expect(output.routes).toEqual([
      { name: 'notes__create', siteId: 'site-1', siteName: 'Notes', tool: 'create', scope: 'write' },
    ]);
    expect(JSON.stringify(output)).not.toMatch(/DESCRIPTION|SCHEMA|SYSTEM PROMPT/);
    // The model is shown the whole set.
    expect(turn.mock.calls[0]![0]).toMatchObject({ system: 'SYSTEM PROMPT', model: 'm' });
    expect(turn.mock.calls[0]![0].tools.map((t) => t.name)).toEqual(['notes__create', 'notes__list']);
  });

  it('gives a workflow of the old code (no toolSets) the tools themselves, and no routes', async () => {
    const { all } = deps('tool');
    const input: ModelTurnInput = { runId: RUN, userId: OWNER, messages: [], start: request(), last: false };
    const output = (await env().run(createActivities(all).modelTurn, input)) as ModelTurnOutput;
    expect(output.context).toEqual({ model: 'm', system: 'SYSTEM PROMPT', tools: SET.tools });
    expect(output).not.toHaveProperty('routes');
  });

  it('reads a later turn’s tool set by the hash its context carries', async () => {
    const { all, turn, toolSet } = deps('tool');
    const input: ModelTurnInput = {
      runId: RUN,
      userId: OWNER,
      messages: [{ role: 'assistant', content: 'earlier' }],
      context: { model: 'm', toolSet: HASH },
      last: false,
    };
    const output = (await env().run(createActivities(all).modelTurn, input)) as ModelTurnOutput;
    expect(toolSet).toHaveBeenCalledWith(HASH);
    expect(turn.mock.calls[0]![0]).toMatchObject({ system: 'SYSTEM PROMPT' });
    expect(turn.mock.calls[0]![0].tools).toHaveLength(2);
    expect(output.routes?.map((r) => r.name)).toEqual(['notes__create']);
    expect(output).not.toHaveProperty('context');
  });

  it('refuses a turn whose run or user differ from those of the run it starts: nothing started, nothing charged', async () => {
    for (const input of [
      { runId: RUN, userId: OTHER, messages: [], start: request(), last: false },
      { runId: OTHER, userId: OWNER, messages: [], start: request(), last: false },
    ] satisfies ModelTurnInput[]) {
      const { all, startRun, turn } = deps();
      const failure = await env()
        .run(createActivities(all).modelTurn, input)
        .catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: 'PERMISSION_DENIED', nonRetryable: true });
      expect(startRun).not.toHaveBeenCalled();
      expect(turn).not.toHaveBeenCalled();
    }
  });
});

describe('archiveRuns', () => {
  const queue = `agent-${request().agentId}`;
  const input = {
    agentId: request().agentId,
    userId: OWNER,
    runs: [{ runId: RUN, status: 'completed' as const, fromEventId: 5 }],
  };

  function archiving() {
    const archiveRuns = jest.fn<ActivityDeps['runs']['archiveRuns']>(async () => undefined);
    const all = { workerIdentity: 'test', runs: { archiveRuns } } as unknown as ActivityDeps;
    return { activities: createActivities(all), archiveRuns };
  }

  it('archives for the asking execution at its hand-over, and for the one the next execution names', async () => {
    const { activities, archiveRuns } = archiving();
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: queue, runId: 'exec-2' } });
    await env.run(activities.archiveRuns, input);
    await env.run(activities.archiveRuns, { ...input, executionRunId: 'exec-1' });
    expect(archiveRuns.mock.calls.map((call) => call[1])).toEqual([
      { workflowId: queue, runId: 'exec-2' },
      { workflowId: queue, runId: 'exec-1' },
    ]);
  });

  it('takes the workflow id from Temporal, never from the input', async () => {
    const { activities, archiveRuns } = archiving();
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'agent-other', runId: 'exec-9' } });
    await env.run(activities.archiveRuns, { ...input, executionRunId: 'exec-1', workflowId: queue } as typeof input);
    expect(archiveRuns.mock.calls[0]![1]).toEqual({ workflowId: 'agent-other', runId: 'exec-1' });
  });
});

describe('an input that is not an object', () => {
  // Every activity the service's workflows send an object; anyone else may send anything.
  const takingObjects = [
    'echo',
    'finishRun',
    'archiveRun',
    'archiveRuns',
    'enqueueScheduledRun',
    'dropSkippedScheduledRun',
    'modelTurn',
    'requestApproval',
    'settleApproval',
    'callTool',
    'sendNotification',
  ] as const;

  it('is refused PERMISSION_DENIED (not retried) before any port is asked', async () => {
    const ports = new Proxy(
      {},
      {
        get: (_target, name) => {
          // A port asked for anything fails the test: the refusal comes first.
          if (typeof name === 'string' && name !== 'then') {
            throw new Error(`port ${name} was asked`);
          }
          return undefined;
        },
      },
    );
    const activities = createActivities({
      workerIdentity: 'test',
      runs: ports,
      model: ports,
      tools: ports,
      approvals: ports,
      notifications: ports,
    } as unknown as ActivityDeps);
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'forged-1', runId: 'exec-1' } });
    for (const name of takingObjects) {
      for (const input of [null, 'x', [1]]) {
        const activity = activities[name] as (input: unknown) => Promise<unknown>;
        const failure = await env.run(activity, input).catch((err: unknown) => err);
        expect({ name, input, failure }).toMatchObject({
          name,
          input,
          failure: { type: 'PERMISSION_DENIED', nonRetryable: true },
        });
      }
    }
  });
});
