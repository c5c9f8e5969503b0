import { describe, expect, it } from '@jest/globals';
import proto, { type temporal } from '@temporalio/proto';
import { terminalEntry, timelineFromHistory } from './timeline.js';

const EventType = proto.temporal.api.enums.v1.EventType;

function failedWith(type: string, message: string): temporal.api.history.v1.IHistoryEvent {
  // Only the fields the timeline reads (ids and times are Longs in the generated types).
  return {
    eventTime: { seconds: 1_800_000_000 as never, nanos: 0 },
    eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
    workflowExecutionFailedEventAttributes: {
      failure: { message, applicationFailureInfo: { type, nonRetryable: true } },
    },
  };
}

describe('timelineFromHistory: failure messages', () => {
  const reference = { workflowId: 'run-abc', runId: 'temporal-run-1' };

  it('keeps the message of a failure with a spec code', () => {
    const [entry] = timelineFromHistory(
      [failedWith('TIER_REQUIRED', 'Running on a schedule needs a higher tier than free')],
      reference,
    );
    expect(entry).toMatchObject({
      type: 'failed',
      code: 'TIER_REQUIRED',
      error: 'Running on a schedule needs a higher tier than free',
    });
  });

  it('shows a generic message with the reference for a failure without one, never its text', () => {
    const raw = 'duplicate key value violates unique constraint "runs_pkey" DETAIL: Key (id)=(1) already exists.';
    const [entry] = timelineFromHistory([failedWith('QueryFailedError', raw)], reference);
    expect(entry).toMatchObject({ type: 'failed', code: 'INTERNAL_ERROR' });
    expect(entry!.error).toContain('workflow run-abc, run temporal-run-1');
    expect(entry!.error).not.toMatch(/duplicate|runs_pkey|QueryFailedError/);
  });
});

describe('terminalEntry: the closing entry of an archived timeline', () => {
  const reference = { workflowId: 'run-abc', runId: 'temporal-run-1' };
  const at = new Date(1_800_000_000_000).toISOString();

  it('reads as the close event of the history would, failures through the same filter', () => {
    for (const [type, message] of [
      ['TIER_REQUIRED', 'Running on a schedule needs a higher tier than free'],
      ['QueryFailedError', 'duplicate key value violates unique constraint "runs_pkey"'],
    ] as const) {
      const fromHistory = timelineFromHistory([failedWith(type, message)], reference);
      expect([terminalEntry({ status: 'failed', error: { error: message, code: type } }, at, reference)]).toEqual(
        fromHistory,
      );
    }
    expect(terminalEntry({ status: 'completed', output: 'Done.' }, at)).toEqual({
      at,
      type: 'completed',
      output: 'Done.',
    });
    expect(terminalEntry({ status: 'cancelled' }, at)).toEqual({ at, type: 'cancelled' });
  });
});
