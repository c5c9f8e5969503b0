/**
 * A run as the agent's queue executes it (executeRun, workflows/agent-run.workflow.ts): model turn →
 * tool calls → model turn … The shipped workflow bundle in a real Worker on a real Temporal dev
 * server, its activities mocked (test/workflows/harness.ts says why the time-skipping server is not
 * used). Covers the durable Retry-After wait and its cap, the turn limit, the size limit of a turn's
 * input, and how failures end a run without stopping the queue.
 */
import { describe, expect, it } from '@jest/globals';
import {
  type CallToolInput,
  FAILURE,
  type FinishRunInput,
  MAX_DURABLE_WAIT_SECONDS,
  MAX_MODEL_TURNS,
  MAX_RATE_LIMIT_WAITS,
  MAX_TOOL_RESULT_BYTES,
  MAX_TURN_INPUT_BYTES,
  type ModelTurnInput,
  type ToolResultBlock,
  RATE_LIMIT_TIMER_SUMMARY,
} from '../../workflows/contracts.js';
import {
  type ActivityCall,
  type ActivityScript,
  agentIdOf,
  HANDOVER_SECONDS,
  enqueue,
  expectReplays,
  historyOf,
  inputsOf,
  localInputsOf,
  lastToolResults,
  mockActivities,
  nonRetryable,
  type QueueHandle,
  rateLimited,
  runRequest,
  runsCalled,
  runSteps,
  runThroughQueue,
  sequence,
  textAnswer,
  timersOf,
  toolUseAnswer,
  until,
  useWorkflowEnvironment,
  withQueueWorker,
} from './harness.js';

const env = useWorkflowEnvironment();

/** Runs `runs` (suffixes of the agent's id) through one agent's queue over `script`, until all are archived. */
function runAll(
  script: ActivityScript,
  runs: string[] = ['1'],
): Promise<{ calls: ActivityCall[]; ids: string[]; handle: QueueHandle }> {
  return runThroughQueue(env(), mockActivities(script), runs);
}

/** A model that calls the tool once, then answers text. */
const oneToolCall: ActivityScript['modelTurn'] = (_input, turn) =>
  turn === 1 ? toolUseAnswer('use-1') : textAnswer('done');

describe('executeRun: Retry-After waits', () => {
  it('waits out the Retry-After on a durable timer, then calls the tool again', async () => {
    const at: number[] = [];
    const { calls, ids, handle } = await runAll({
      modelTurn: oneToolCall,
      callTool: (_input: CallToolInput, attempt: number) => {
        at.push(Date.now());
        if (attempt === 1) {
          throw rateLimited(2);
        }
        return { result: { found: 'it' }, durationMs: 1, refreshed: false };
      },
    });
    const [runId] = ids as [string];
    expect(sequence(calls)).toEqual([
      `modelTurn:${runId}`,
      `callTool:${runId}`,
      `callTool:${runId}`,
      `modelTurn:${runId}`,
      `archiveRun:${runId}`,
    ]);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(1_900);
    const tools = inputsOf<CallToolInput>(calls, 'callTool');
    expect(tools[1]).toEqual(tools[0]);
    expect(tools[0]).toMatchObject({ runId, siteId: 'site-1', tool: 'lookup', input: { q: 'use-1' } });
    expect(lastToolResults(calls, runId)).toEqual([
      { type: 'tool_result', tool_use_id: 'use-1', content: JSON.stringify({ found: 'it' }) },
    ]);
    const events = await historyOf(handle);
    expect(timersOf(events).filter((t) => t.summary === RATE_LIMIT_TIMER_SUMMARY)).toEqual([
      { seconds: 2, summary: RATE_LIMIT_TIMER_SUMMARY },
    ]);
    // The wait's timer fired once (the execution's own age timer aside: it hands over after the run).
    const waits = new Set(
      events.filter((e) => e.timerStartedEventAttributes && e.userMetadata?.summary).map((e) => String(e.eventId)),
    );
    expect(events.filter((e) => waits.has(String(e.timerFiredEventAttributes?.startedEventId)))).toHaveLength(1);
    await expectReplays(handle);
  });

  it('waits at least 1 s when the Retry-After says 0', async () => {
    const { handle } = await runAll({
      modelTurn: oneToolCall,
      callTool: (_input, attempt) => {
        if (attempt === 1) {
          throw rateLimited(0);
        }
        return { result: 'ok', durationMs: 1, refreshed: false };
      },
    });
    expect(timersOf(await historyOf(handle))).toContainEqual({ seconds: 1, summary: RATE_LIMIT_TIMER_SUMMARY });
  });

  it(`does not wait over the ${MAX_DURABLE_WAIT_SECONDS} s cap: the model is told, and the run goes on`, async () => {
    // At the cap itself the run waits: agent-queue.workflow-spec cancels a run in a 300 s wait.
    const { calls, ids, handle } = await runAll({
      modelTurn: oneToolCall,
      callTool: () => {
        throw rateLimited(MAX_DURABLE_WAIT_SECONDS + 1);
      },
    });
    const [runId] = ids as [string];
    expect(runsCalled(calls, 'callTool')).toEqual([runId]);
    expect(lastToolResults(calls, runId)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'use-1',
        content: `Test site asked to wait ${MAX_DURABLE_WAIT_SECONDS + 1} s, over the ${MAX_DURABLE_WAIT_SECONDS} s cap; not waiting`,
        is_error: true,
      },
    ]);
    const events = await historyOf(handle);
    expect(timersOf(events).filter((t) => t.summary === RATE_LIMIT_TIMER_SUMMARY)).toEqual([]);
    expect(inputsOf<FinishRunInput>(calls, 'archiveRun')).toMatchObject([{ runId, status: 'completed' }]);
  });

  it(`gives the model an error after ${MAX_RATE_LIMIT_WAITS} waits for one tool call`, async () => {
    const { calls, ids, handle } = await runAll({
      modelTurn: oneToolCall,
      callTool: () => {
        throw rateLimited(1);
      },
    });
    const [runId] = ids as [string];
    expect(runsCalled(calls, 'callTool')).toHaveLength(MAX_RATE_LIMIT_WAITS + 1);
    expect(timersOf(await historyOf(handle)).filter((t) => t.summary === RATE_LIMIT_TIMER_SUMMARY)).toHaveLength(
      MAX_RATE_LIMIT_WAITS,
    );
    expect(lastToolResults(calls, runId)).toEqual([
      { type: 'tool_result', tool_use_id: 'use-1', content: 'Test site asked to wait 1 s', is_error: true },
    ]);
  }, 30_000);
});

describe('executeRun: the tool set by hash', () => {
  it("asks turn 1 for the context by tool set hash, carries only the hash, and routes calls by the answers' routes", async () => {
    const toolSet = 'f'.repeat(64);
    const route = {
      name: 'notes__look',
      siteId: 'site-9',
      siteName: 'Routed',
      tool: 'look.up',
      scope: 'read' as const,
    };
    const { calls, ids, handle } = await runAll({
      context: { model: 'test-model', toolSet },
      modelTurn: (_input, turn) => {
        if (turn === 1) {
          // The answer calls a tool of the set and one the set lacks (no route for it).
          const answer = toolUseAnswer('use-1', 'notes__look');
          return {
            ...answer,
            content: [...answer.content, { type: 'tool_use', id: 'use-2', name: 'ghost', input: {} }],
            routes: [route],
          };
        }
        // A later answer calls the same tool without bringing its route again.
        return turn === 2 ? toolUseAnswer('use-3', 'notes__look') : textAnswer('done');
      },
    });
    const [runId] = ids as [string];
    const turns = inputsOf<ModelTurnInput>(calls, 'modelTurn');
    expect(turns.map((t) => t.toolSets)).toEqual([true, undefined, undefined]);
    expect(turns.slice(1).map((t) => t.context)).toEqual([
      { model: 'test-model', toolSet },
      { model: 'test-model', toolSet },
    ]);
    expect(inputsOf<CallToolInput>(calls, 'callTool').map((c) => [c.siteId, c.siteName, c.tool])).toEqual([
      ['site-9', 'Routed', 'look.up'],
      ['site-9', 'Routed', 'look.up'],
    ]);
    const second = turns[1]!.messages.at(-1)!.content as ToolResultBlock[];
    expect(second[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'use-2',
      content: 'No tool named ghost',
      is_error: true,
    });
    expect(lastToolResults(calls, runId)).toMatchObject([{ tool_use_id: 'use-3', content: JSON.stringify({ ok: 2 }) }]);
    await expectReplays(handle);
  }, 30_000);
});

describe('executeRun: turns and tools', () => {
  it(`ends the run with turn ${MAX_MODEL_TURNS} whatever the model asks`, async () => {
    const { calls, ids } = await runAll({ modelTurn: (_input, turn) => toolUseAnswer(`use-${turn}`) });
    const [runId] = ids as [string];
    const turns = inputsOf<ModelTurnInput>(calls, 'modelTurn');
    expect(turns).toHaveLength(MAX_MODEL_TURNS);
    expect(turns.map((t) => t.last)).toEqual([...Array<boolean>(MAX_MODEL_TURNS - 1).fill(false), true]);
    // Turn 1 starts the run with its request; the later ones carry the context turn 1 returned.
    expect(turns[0]).toMatchObject({ runId, start: { runId }, messages: [] });
    expect(turns[0]!.context).toBeUndefined();
    expect(turns.slice(1).every((t) => t.start === undefined && t.context?.model === 'test-model')).toBe(true);
    // The conversation grows by the model's answer and the tool results each turn.
    expect(turns.map((t) => t.messages.length)).toEqual(turns.map((_, i) => 2 * i));
    expect(runsCalled(calls, 'callTool')).toHaveLength(MAX_MODEL_TURNS - 1);
    // The last turn recorded the run completed: the workflow writes no end of its own.
    expect(runsCalled(calls, 'finishRun')).toEqual([]);
    expect(inputsOf<FinishRunInput>(calls, 'archiveRun')).toMatchObject([{ runId, status: 'completed' }]);
  }, 40_000);

  it('gives the model what a tool answered, failed or was cut to, and an unknown tool its error', async () => {
    const { calls, ids } = await runAll({
      modelTurn: (_input, turn) =>
        turn === 1
          ? {
              ...toolUseAnswer('use-1'),
              content: [
                { type: 'tool_use', id: 'use-1', name: 'lookup', input: { n: 1 } },
                { type: 'tool_use', id: 'use-2', name: 'lookup', input: { n: 2 } },
                { type: 'tool_use', id: 'use-3', name: 'nowhere', input: {} },
              ],
            }
          : textAnswer('done'),
      callTool: (input) => {
        if ((input.input as { n: number }).n === 1) {
          throw nonRetryable('The site said no', FAILURE.toolExecutionError);
        }
        return { result: 'abc', durationMs: 1, refreshed: false, truncated: 100_000 };
      },
    });
    const [runId] = ids as [string];
    expect(runsCalled(calls, 'callTool')).toEqual([runId, runId]);
    expect(lastToolResults(calls, runId)).toEqual([
      { type: 'tool_result', tool_use_id: 'use-1', content: 'The site said no', is_error: true },
      {
        type: 'tool_result',
        tool_use_id: 'use-2',
        content: `abc\n[cut: the answer was 100000 bytes; only its first ${MAX_TOOL_RESULT_BYTES} are kept]`,
      },
      { type: 'tool_result', tool_use_id: 'use-3', content: 'No tool named nowhere', is_error: true },
    ]);
    expect(inputsOf<FinishRunInput>(calls, 'archiveRun')).toMatchObject([{ runId, status: 'completed' }]);
  });

  it('calls an MCP tool by the server’s own name and gives the model its text and image blocks as such', async () => {
    const png = 'iVBORw0KGgo=';
    const { calls, ids } = await runAll({
      modelTurn: (_input, turn) =>
        turn === 1 ? toolUseAnswer('use-1', 'docs__files_read', { path: 'a.png' }) : textAnswer('done'),
      callTool: () => ({
        result: {
          content: [
            { type: 'text', text: 'The picture:' },
            { type: 'image', mimeType: 'image/png', data: png },
            { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
          ],
        },
        durationMs: 1,
        refreshed: false,
      }),
    });
    const [runId] = ids as [string];
    expect(inputsOf<CallToolInput>(calls, 'callTool')).toMatchObject([
      { runId, siteId: 'site-2', siteName: 'Docs', tool: 'files.read', input: { path: 'a.png' } },
    ]);
    expect(lastToolResults(calls, runId)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'use-1',
        content: [
          { type: 'text', text: 'The picture:' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'text', text: '[audio (audio/wav) of 4 bytes: not passed on, the model cannot hear it]' },
        ],
      },
    ]);
  });

  it('fails the run when the credits end (model or tool), records why, and the queue goes on', async () => {
    const { calls, ids } = await runAll(
      {
        modelTurn: (input, turn) => {
          if (input.runId.endsWith('-model')) {
            throw nonRetryable('No credits left', FAILURE.noCredits);
          }
          return input.runId.endsWith('-tool') && turn === 1 ? toolUseAnswer('use-1') : textAnswer('done');
        },
        callTool: () => {
          throw nonRetryable('No credits left for the tool', FAILURE.noCredits);
        },
      },
      ['model', 'tool', 'next'],
    );
    const [model, tool, next] = ids as [string, string, string];
    expect(runSteps(calls)).toEqual([
      `modelTurn:${model}`,
      `finishRun:${model}`,
      `modelTurn:${tool}`,
      `callTool:${tool}`,
      `finishRun:${tool}`,
      `modelTurn:${next}`,
    ]);
    expect(inputsOf<FinishRunInput>(calls, 'finishRun')).toMatchObject([
      { runId: model, status: 'failed', error: { code: FAILURE.noCredits, error: 'No credits left' } },
      { runId: tool, status: 'failed', error: { code: FAILURE.noCredits, error: 'No credits left for the tool' } },
    ]);
    expect(inputsOf<FinishRunInput>(calls, 'archiveRun').map((a) => a.status)).toEqual([
      'failed',
      'failed',
      'completed',
    ]);
  });
});

describe('executeRun: size of a turn', () => {
  it(`fails the run, before the turn, when a turn's input would pass ${MAX_TURN_INPUT_BYTES} bytes`, async () => {
    // The tool's answer decides the size of turn 2's input. Run `a` measures it for a 1-byte answer;
    // run `b` (same lengths) answers so that turn 2's input is the limit exactly, run `c` one byte more.
    let padding = 0;
    const answerOf = (runId: string): string => {
      if (runId.endsWith('-a')) {
        return 'x';
      }
      return 'x'.repeat(1 + padding + (runId.endsWith('-c') ? 1 : 0));
    };
    const mock = mockActivities({
      modelTurn: (input, turn) => {
        if (input.runId.endsWith('-a') && turn === 2) {
          padding = MAX_TURN_INPUT_BYTES - Buffer.byteLength(JSON.stringify(input));
        }
        return turn === 1 ? toolUseAnswer('use-1') : textAnswer('done');
      },
      callTool: (input) => ({ result: answerOf(input.runId), durationMs: 1, refreshed: false }),
    });
    await withQueueWorker(env(), mock.activities, async (start) => {
      const handle = await start({ executionSeconds: HANDOVER_SECONDS });
      const agentId = agentIdOf(handle);
      const [a, b, c] = ['a', 'b', 'c'].map((s) => `${agentId}-${s}`) as [string, string, string];
      await enqueue(handle, runRequest(agentId, a));
      await until('run a archived', () => runsCalled(mock.calls, 'archiveRun').includes(a));
      expect(padding).toBeGreaterThan(1_000_000);
      await enqueue(handle, runRequest(agentId, b));
      await enqueue(handle, runRequest(agentId, c));
      await until('run c archived', () => runsCalled(mock.calls, 'archiveRun').includes(c), 40_000);

      const turnsOf = (runId: string): ModelTurnInput[] => inputsOf<ModelTurnInput>(mock.calls, 'modelTurn', runId);
      expect(turnsOf(b)).toHaveLength(2);
      expect(Buffer.byteLength(JSON.stringify(turnsOf(b)[1]))).toBe(MAX_TURN_INPUT_BYTES);
      expect(turnsOf(c)).toHaveLength(1);
      const finished = localInputsOf<FinishRunInput>(mock.calls, 'finishRun');
      expect(finished).toEqual([
        expect.objectContaining({
          runId: c,
          status: 'failed',
          error: {
            code: FAILURE.modelError,
            error: `The run's conversation has grown to ${MAX_TURN_INPUT_BYTES + 1} bytes, over the ${MAX_TURN_INPUT_BYTES} one model turn may carry`,
          },
        }),
      ]);
      expect(localInputsOf<FinishRunInput>(mock.calls, 'archiveRun').map((f) => [f.runId, f.status])).toEqual([
        [a, 'completed'],
        [b, 'completed'],
        [c, 'failed'],
      ]);
    });
  }, 60_000);
});
