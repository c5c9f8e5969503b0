/**
 * A run whose agent has an approval policy (workflows/approval-wait.ts): before a call whose scope the
 * policy lists, the run records the request, waits on a durable timer for the `decideApproval` Update
 * sent to its agent's queue, records the outcome, then calls (approve) or gives the model a refusal
 * (deny, expired). The shipped bundle in a real Worker on a real dev server (harness.ts); the timeouts
 * are short through the context (a policy's `timeoutSeconds`), as the mocked turn 1 returns it.
 */
import { describe, expect, it } from '@jest/globals';
import { Worker } from '@temporalio/worker';
import { workflowSource } from '../../src/temporal/worker-factory.js';
import {
  AGENT_HANDLERS,
  type ApprovalPolicy,
  type CallToolInput,
  type DecideApprovalInput,
  type FinishRunInput,
  type ModelTurnInput,
  type RequestApprovalInput,
  type RunContext,
  type SettleApprovalInput,
} from '../../workflows/contracts.js';
import {
  type ActivityCall,
  type ActivityScript,
  agentIdOf,
  cancelRun,
  CONTEXT,
  enqueue,
  expectReplays,
  gate,
  historyOf,
  inputsOf,
  lastToolResults,
  mockActivities,
  type ModelAnswer,
  type QueueHandle,
  queueState,
  runRequest,
  runThroughQueue,
  sequence,
  textAnswer,
  timersOf,
  toolUseAnswer,
  until,
  useWorkflowEnvironment,
} from './harness.js';

const env = useWorkflowEnvironment();

/** CONTEXT's tools with their scopes (lookup writes, the MCP one reads) and a policy on writes. */
function contextWith(approvals: ApprovalPolicy): RunContext {
  return {
    ...CONTEXT,
    tools: (CONTEXT.tools ?? []).map((t) => ({ ...t, scope: t.name === 'lookup' ? 'write' : 'read' })),
    approvals,
  };
}

const ADA = { userId: 'user-ada', name: 'Ada' };

function decide(handle: QueueHandle, input: Partial<DecideApprovalInput>): Promise<string> {
  return handle.executeUpdate<string, [DecideApprovalInput]>(AGENT_HANDLERS.decideApproval, {
    args: [{ runId: '', approvalId: '', decision: 'approve', note: null, by: ADA, ...input }],
  });
}

/** The n-th approval the run asked for (1-based), once asked. */
async function asked(calls: ActivityCall[], n = 1): Promise<RequestApprovalInput> {
  await until(`approval ${n} requested`, () => inputsOf(calls, 'requestApproval').length >= n);
  return inputsOf<RequestApprovalInput>(calls, 'requestApproval')[n - 1]!;
}

/**
 * One run of one agent over `script` (its model calls `lookup` once, then answers), the policy's
 * `timeoutSeconds` 60 unless given; `body` drives it while it waits; returns once the run is archived
 * (at its execution's hand-over).
 */
async function withWaitingRun(
  script: ActivityScript & { timeoutSeconds?: number },
  body: (run: { handle: QueueHandle; runId: string; calls: ActivityCall[] }) => Promise<void>,
): Promise<{ handle: QueueHandle; runId: string; calls: ActivityCall[] }> {
  const mock = mockActivities({
    modelTurn: (_input, turn) => (turn === 1 ? toolUseAnswer('use-1') : textAnswer('done')),
    ...script,
    context: contextWith({ scopes: ['write'], timeoutSeconds: script.timeoutSeconds ?? 60 }),
  });
  const { handle, ids, calls } = await runThroughQueue(env(), mock, ['1'], ({ handle, ids, calls }) =>
    body({ handle, runId: ids[0]!, calls }),
  );
  return { handle, runId: ids[0]!, calls };
}

async function expectBothBundlesReplay(handle: QueueHandle): Promise<void> {
  await expectReplays(handle);
  const history = await handle.fetchHistory();
  await Worker.runReplayHistory(
    {
      ...workflowSource(false, true),
      sinks: { exporter: { export: { fn: () => undefined } } },
      replayName: `${handle.workflowId}-traced`,
    },
    history,
  );
}

describe('approvals: a call waits for a decision', () => {
  it('approve: records the request, waits with no call, answers once settled, then makes the call', async () => {
    let answered: string | undefined;
    const { calls, runId, handle } = await withWaitingRun({}, async ({ handle, runId, calls }) => {
      const request = await asked(calls);
      expect(request).toMatchObject({
        runId,
        siteId: 'site-1',
        siteName: 'Test site',
        tool: 'lookup',
        input: { q: 'use-1' },
        scope: 'write',
      });
      expect(request.approvalId).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.parse(request.expiresAt) - Date.parse(request.requestedAt)).toBe(60_000);
      expect(await queueState(handle)).toEqual({ activeRunId: runId, queuedRunIds: [] });
      expect(calls.some((c) => c.name === 'callTool')).toBe(false);
      answered = await decide(handle, { runId, approvalId: request.approvalId, note: 'fine' });
      // The answer comes once the outcome is recorded.
      expect(inputsOf<SettleApprovalInput>(calls, 'settleApproval')).toMatchObject([
        { runId, approvalId: request.approvalId, status: 'approved', by: ADA, note: 'fine' },
      ]);
    });
    expect(answered).toBe('approved');
    expect(sequence(calls)).toEqual([
      `modelTurn:${runId}`,
      `requestApproval:${runId}`,
      `settleApproval:${runId}`,
      `callTool:${runId}`,
      `modelTurn:${runId}`,
      `archiveRun:${runId}`,
    ]);
    expect(inputsOf<CallToolInput>(calls, 'callTool')).toMatchObject([{ tool: 'lookup', input: { q: 'use-1' } }]);
    expect(lastToolResults(calls)).toEqual([
      { type: 'tool_result', tool_use_id: 'use-1', content: JSON.stringify({ ok: 1 }) },
    ]);
    // One durable timer for what is left of the policy's 60 s once the request is recorded.
    expect(timersOf(await historyOf(handle)).filter((t) => t.seconds >= 50 && t.seconds <= 60)).toHaveLength(1);
    await expectBothBundlesReplay(handle);
  });

  it('deny: no call; the model gets the refusal with who and the note, and the run goes on', async () => {
    const { calls, runId, handle } = await withWaitingRun({}, async ({ handle, runId, calls }) => {
      const { approvalId } = await asked(calls);
      expect(await decide(handle, { runId, approvalId, decision: 'deny', note: 'not on Fridays' })).toBe('denied');
    });
    expect(calls.some((c) => c.name === 'callTool')).toBe(false);
    expect(inputsOf<SettleApprovalInput>(calls, 'settleApproval')).toMatchObject([
      { status: 'denied', by: ADA, note: 'not on Fridays' },
    ]);
    expect(lastToolResults(calls)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'use-1',
        content: 'The call was not approved: denied by Ada: not on Fridays',
        is_error: true,
      },
    ]);
    expect(inputsOf<FinishRunInput>(calls, 'archiveRun')).toMatchObject([{ runId, status: 'completed' }]);
    await expectBothBundlesReplay(handle);
  });

  it('timeout: expired, with nobody named; the model is told no decision came in time', async () => {
    const { calls, handle } = await withWaitingRun({ timeoutSeconds: 2 }, async () => undefined);
    const [request] = inputsOf<RequestApprovalInput>(calls, 'requestApproval');
    expect(calls.some((c) => c.name === 'callTool')).toBe(false);
    expect(inputsOf<SettleApprovalInput>(calls, 'settleApproval')).toMatchObject([
      { approvalId: request!.approvalId, status: 'expired', by: null, note: null },
    ]);
    expect(lastToolResults(calls)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'use-1',
        content: `The call was not approved: no decision by ${request!.expiresAt}`,
        is_error: true,
      },
    ]);
    expect(timersOf(await historyOf(handle)).filter((t) => t.seconds <= 2)).toHaveLength(1);
    await expectBothBundlesReplay(handle);
  });

  it('cancel while waiting: the request is settled cancelled and the run ends cancelled, with no call', async () => {
    const { calls, runId, handle } = await withWaitingRun({}, async ({ handle, runId, calls }) => {
      await asked(calls);
      expect(await cancelRun(handle, runId)).toBe('cancelled');
    });
    expect(sequence(calls)).toEqual([
      `modelTurn:${runId}`,
      `requestApproval:${runId}`,
      `settleApproval:${runId}`,
      `finishRun:${runId}`,
      `archiveRun:${runId}`,
    ]);
    expect(inputsOf<SettleApprovalInput>(calls, 'settleApproval')).toMatchObject([{ status: 'cancelled', by: null }]);
    expect(inputsOf<FinishRunInput>(calls, 'finishRun')).toMatchObject([{ runId, status: 'cancelled' }]);
    await expectBothBundlesReplay(handle);
  });

  it('two calls in one turn wait in order: the second is asked only once the first is settled and made', async () => {
    const twoCalls = (_input: ModelTurnInput, turn: number): ModelAnswer =>
      turn === 1
        ? {
            ...toolUseAnswer('use-1'),
            content: [...toolUseAnswer('use-1').content, ...toolUseAnswer('use-2').content],
          }
        : textAnswer('done');
    const { calls, runId } = await withWaitingRun({ modelTurn: twoCalls }, async ({ handle, runId, calls }) => {
      const first = await asked(calls, 1);
      expect(inputsOf(calls, 'requestApproval')).toHaveLength(1);
      await decide(handle, { runId, approvalId: first.approvalId });
      const second = await asked(calls, 2);
      expect(second.approvalId).not.toBe(first.approvalId);
      expect(second.input).toEqual({ q: 'use-2' });
      // The first one's id is done with.
      await expect(decide(handle, { runId, approvalId: first.approvalId })).rejects.toMatchObject({
        cause: { type: 'VALIDATION_ERROR' },
      });
      await decide(handle, { runId, approvalId: second.approvalId, decision: 'deny' });
    });
    expect(sequence(calls)).toEqual([
      `modelTurn:${runId}`,
      `requestApproval:${runId}`,
      `settleApproval:${runId}`,
      `callTool:${runId}`,
      `requestApproval:${runId}`,
      `settleApproval:${runId}`,
      `modelTurn:${runId}`,
      `archiveRun:${runId}`,
    ]);
    expect(lastToolResults(calls).map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([
      ['use-1', false],
      ['use-2', true],
    ]);
  });

  it('a call of a scope the policy does not list does not wait', async () => {
    const { calls, runId } = await withWaitingRun(
      {
        modelTurn: (_input, turn) =>
          turn === 1 ? toolUseAnswer('use-1', 'docs__files_read', { path: 'a' }) : textAnswer('done'),
      },
      async () => undefined,
    );
    expect(sequence(calls)).toEqual([
      `modelTurn:${runId}`,
      `callTool:${runId}`,
      `modelTurn:${runId}`,
      `archiveRun:${runId}`,
    ]);
  });
});

describe('approvals: the queue and the Update’s validator', () => {
  it('a run queued behind a waiting run starts only after that run has ended', async () => {
    const second = { runId: '' };
    // The first run calls the tool; the second answers at once.
    const script: ActivityScript = {
      modelTurn: (input, turn) =>
        turn === 1 && input.runId !== second.runId ? toolUseAnswer('use-1') : textAnswer('done'),
    };
    const { calls, runId } = await withWaitingRun(script, async ({ handle, runId, calls }) => {
      const { approvalId } = await asked(calls);
      second.runId = `${agentIdOf(handle)}-2`;
      await enqueue(handle, runRequest(agentIdOf(handle), second.runId));
      expect(await queueState(handle)).toEqual({ activeRunId: runId, queuedRunIds: [second.runId] });
      expect(calls.filter((c) => c.runId === second.runId)).toEqual([]);
      await decide(handle, { runId, approvalId });
      await until('the second run archived', () =>
        calls.some((c) => c.name === 'archiveRun' && c.runId === second.runId),
      );
    });
    const order = sequence(calls);
    expect(order.indexOf(`modelTurn:${second.runId}`)).toBeGreaterThan(order.lastIndexOf(`modelTurn:${runId}`));
  });

  it('refuses a decision for another run or approval, a malformed one and a second one, changing nothing', async () => {
    const settling = gate();
    const { calls, handle } = await withWaitingRun(
      { timeoutSeconds: 60, settleApproval: () => settling.opened },
      async ({ handle, runId, calls }) => {
        const { approvalId } = await asked(calls);
        const refusal = { cause: { type: 'VALIDATION_ERROR' } };
        await expect(decide(handle, { runId: 'another-run', approvalId })).rejects.toMatchObject(refusal);
        await expect(
          decide(handle, { runId, approvalId: '00000000-0000-4000-8000-000000000000' }),
        ).rejects.toMatchObject(refusal);
        await expect(decide(handle, { runId, approvalId, decision: 'maybe' as never })).rejects.toMatchObject(refusal);
        await expect(decide(handle, { runId, approvalId, note: 'x'.repeat(1001) })).rejects.toMatchObject(refusal);
        expect(calls.some((c) => c.name === 'settleApproval')).toBe(false);
        // The first decision waits for its settlement (held): a second one meanwhile is refused.
        const first = decide(handle, { runId, approvalId, decision: 'deny', note: 'no' });
        await until('the outcome being recorded', () => calls.some((c) => c.name === 'settleApproval'));
        await expect(decide(handle, { runId, approvalId, decision: 'approve' })).rejects.toMatchObject(refusal);
        settling.open();
        expect(await first).toBe('denied');
        await expect(decide(handle, { runId, approvalId, decision: 'approve' })).rejects.toMatchObject(refusal);
      },
    );
    expect(inputsOf<SettleApprovalInput>(calls, 'settleApproval')).toMatchObject([{ status: 'denied', note: 'no' }]);
    expect(calls.some((c) => c.name === 'callTool')).toBe(false);
    // A refused Update leaves no trace in the history: only the accepted one is there.
    const updates = (await historyOf(handle)).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(
      updates.filter(
        (e) =>
          e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ===
          AGENT_HANDLERS.decideApproval,
      ),
    ).toHaveLength(1);
  });

  it('refuses a decision that comes after the approval expired, changing nothing', async () => {
    const { calls } = await withWaitingRun({ timeoutSeconds: 2 }, async ({ handle, runId, calls }) => {
      const { approvalId } = await asked(calls);
      await until('the approval expired', () => calls.some((c) => c.name === 'settleApproval'));
      await expect(decide(handle, { runId, approvalId })).rejects.toMatchObject({
        cause: { type: 'VALIDATION_ERROR' },
      });
    });
    expect(inputsOf<SettleApprovalInput>(calls, 'settleApproval')).toMatchObject([{ status: 'expired' }]);
    expect(calls.some((c) => c.name === 'callTool')).toBe(false);
  });
});
