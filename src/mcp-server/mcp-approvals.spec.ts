import { describe, expect, it } from '@jest/globals';
import type { RunResponse } from '../runs/run-response.js';
import { progressMessage, runResult } from './mcp-agent-tools.js';
import { decisionOf } from './mcp-approvals.js';
import { taskOf } from './mcp-tasks.js';

const BASE = 'https://agentsite.example.com';

function run(status: RunResponse['status'], awaiting: object | null = null): RunResponse {
  return {
    id: 'r1',
    agentId: 'a1',
    status,
    queuedAt: '2026-11-26T10:00:00.000Z',
    startedAt: '2026-11-26T10:00:01.000Z',
    endedAt: null,
    awaiting,
  } as unknown as RunResponse;
}

const AWAITING = {
  approvalId: 'ap1',
  site: 'Reference Notebook',
  tool: 'create_note',
  scope: 'write',
  expiresAt: '2026-11-27T10:00:01.000Z',
};

describe('MCP: a run that waits for an approval', () => {
  it('is an input_required task whose statusMessage names the call, the console link and decide_approval', () => {
    const task = taskOf(run('active', AWAITING), BASE);
    expect(task).toMatchObject({ taskId: 'r1', status: 'input_required' });
    const message = task.statusMessage as string;
    expect(message).toContain('create_note of Reference Notebook');
    expect(message).toContain(`${BASE}/runs/r1`);
    expect(message).toContain('decide_approval');
    expect(message).toContain('"ap1"');
    expect(message).toContain('changes data');
  });

  it('is working again once decided (no awaiting), and final statuses stay as they are', () => {
    expect(taskOf(run('active'), BASE)).toMatchObject({ status: 'working', statusMessage: 'The run is active' });
    expect(taskOf(run('queued'), BASE)).toMatchObject({ status: 'working' });
    // A stale awaiting on an ended run is not a wait.
    expect(taskOf(run('cancelled', AWAITING), BASE)).toMatchObject({ status: 'cancelled' });
  });

  it('answers a wait-mode call with the wait in words and `awaiting` in structuredContent', () => {
    const answer = runResult(run('active', AWAITING), BASE);
    expect(answer.isError).not.toBe(true);
    expect(answer.structuredContent).toEqual({ runId: 'r1', status: 'active', awaiting: AWAITING });
    const text = (answer.content[0] as { text: string }).text;
    expect(text).toContain('Run r1 is waiting for approval to call create_note of Reference Notebook');
    expect(text).toContain('get_run');
    expect(runResult(run('active'), BASE).structuredContent).toEqual({ runId: 'r1', status: 'active' });
  });

  it('tells progress of the wait and of the decision in words', () => {
    expect(progressMessage({ type: 'approval_requested', site: 'Reference Notebook', tool: 'create_note' })).toBe(
      'Waiting for approval to call create_note of Reference Notebook',
    );
    expect(progressMessage({ type: 'approval_decided', decision: 'approve', by: { name: 'Ada' } })).toBe(
      'Approved by Ada',
    );
    expect(progressMessage({ type: 'approval_decided', decision: 'deny', by: { name: 'Ada' } })).toBe('Denied by Ada');
    expect(progressMessage({ type: 'approval_decided', decision: 'expired', by: null })).toBe(
      'No decision in time: the call was not made',
    );
    expect(progressMessage({ type: 'approval_decided', decision: 'cancelled', by: null })).toBe(
      'The run was cancelled while it waited for approval',
    );
  });
});

describe('decide_approval’s arguments', () => {
  it('takes {runId, approvalId, decision, note?}', () => {
    expect(decisionOf({ runId: 'r1', approvalId: 'ap1', decision: 'approve' })).toEqual({
      runId: 'r1',
      approvalId: 'ap1',
      decision: 'approve',
    });
    expect(decisionOf({ runId: 'r1', approvalId: 'ap1', decision: 'deny', note: 'Not today' })).toMatchObject({
      note: 'Not today',
    });
  });

  it('refuses wrong input with VALIDATION_ERROR naming each field', () => {
    const refusal = (args: Record<string, unknown>) => {
      try {
        decisionOf(args);
      } catch (error) {
        return error as { code: string; details: Array<{ field: string }> };
      }
      throw new Error('accepted');
    };
    const bad = refusal({ runId: 1, decision: 'maybe', note: 'x'.repeat(1001), extra: true });
    expect(bad.code).toBe('VALIDATION_ERROR');
    expect(bad.details.map((d) => d.field).sort()).toEqual(['approvalId', 'decision', 'extra', 'note', 'runId']);
    expect(refusal({ runId: 'r1', approvalId: 'ap1', decision: 'approve', note: 42 }).details).toEqual([
      expect.objectContaining({ field: 'note' }),
    ]);
    // As the REST body: a null note is no note.
    expect(decisionOf({ runId: 'r1', approvalId: 'ap1', decision: 'approve', note: null })).not.toHaveProperty('note');
  });
});
