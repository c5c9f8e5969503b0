import { describe, expect, it } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import proto, { type temporal } from '@temporalio/proto';
import { failureConverter } from '../temporal/failure-converter.js';
import { AesGcmPayloadCodec } from '../temporal/payload-codec.js';
import { terminalEntry, timelineFromHistory } from './timeline.js';

const codec = new AesGcmPayloadCodec([{ id: 't1', key: Buffer.alloc(32, 1) }]);

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

  it('keeps the message of a failure with a spec code', async () => {
    const [entry] = await timelineFromHistory(
      [failedWith('TIER_REQUIRED', 'Running on a schedule needs a higher tier than free')],
      codec,
      reference,
    );
    expect(entry).toMatchObject({
      type: 'failed',
      code: 'TIER_REQUIRED',
      error: 'Running on a schedule needs a higher tier than free',
    });
  });

  it('shows a generic message with the reference for a failure without one, never its text', async () => {
    const raw = 'duplicate key value violates unique constraint "runs_pkey" DETAIL: Key (id)=(1) already exists.';
    const [entry] = await timelineFromHistory([failedWith('QueryFailedError', raw)], codec, reference);
    expect(entry).toMatchObject({ type: 'failed', code: 'INTERNAL_ERROR' });
    const error = entry?.type === 'failed' ? entry.error : '';
    expect(error).toContain('workflow run-abc, run temporal-run-1');
    expect(error).not.toMatch(/duplicate|runs_pkey|QueryFailedError/);
  });
});

describe('timelineFromHistory: encrypted histories', () => {
  it('decodes sealed payloads and encoded failure messages through the codec, and shows what a clear history shows', async () => {
    const started = { seconds: 1_800_000_000 as never, nanos: 0 };
    const input = defaultPayloadConverter.toPayload({ triggeredBy: 'webhook', payload: { ticket: 'secret-ticket' } });
    const toolInput = defaultPayloadConverter.toPayload({
      siteName: 'Notes',
      siteId: 's1',
      tool: 'search',
      input: { q: 'x' },
    });
    const failure = failureConverter.errorToFailure(
      Object.assign(new Error('site said: quota exceeded'), { name: 'ApplicationFailure' }),
      defaultPayloadConverter,
    );
    expect(failure.message).toBe('Encoded failure');
    const events = (sealed: boolean) =>
      [
        {
          eventId: 1 as never,
          eventTime: started,
          eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
          workflowExecutionStartedEventAttributes: { input: { payloads: [input] } },
        },
        {
          eventId: 5 as never,
          eventTime: started,
          eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
          activityTaskScheduledEventAttributes: {
            activityType: { name: 'callTool' },
            input: { payloads: [toolInput] },
          },
        },
        {
          eventId: 7 as never,
          eventTime: started,
          eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
          activityTaskFailedEventAttributes: {
            scheduledEventId: 5 as never,
            failure: {
              ...failure,
              encodedAttributes: sealed ? codec.seal(failure.encodedAttributes!) : failure.encodedAttributes,
              applicationFailureInfo: { type: 'TOOL_EXECUTION_ERROR' },
            },
          },
        },
      ].map((event) =>
        sealed && event.workflowExecutionStartedEventAttributes
          ? { ...event, workflowExecutionStartedEventAttributes: { input: { payloads: [codec.seal(input)] } } }
          : sealed && event.activityTaskScheduledEventAttributes
            ? {
                ...event,
                activityTaskScheduledEventAttributes: {
                  activityType: { name: 'callTool' },
                  input: { payloads: [codec.seal(toolInput)] },
                },
              }
            : event,
      );
    const encrypted = events(true);
    expect(JSON.stringify(encrypted)).not.toContain('secret-ticket');
    const timeline = await timelineFromHistory(encrypted, codec);
    expect(timeline).toEqual(await timelineFromHistory(events(false), codec));
    expect(timeline.map((e) => e.type)).toEqual(['triggered', 'tool_call', 'tool_result']);
    expect(timeline[0]).toMatchObject({ payload: { ticket: 'secret-ticket' } });
    expect(timeline[2]).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_ERROR', error: 'site said: quota exceeded' });
  });
});

describe('terminalEntry: the closing entry of an archived timeline', () => {
  const reference = { workflowId: 'run-abc', runId: 'temporal-run-1' };
  const at = new Date(1_800_000_000_000).toISOString();

  it('reads as the close event of the history would, failures through the same filter', async () => {
    for (const [type, message] of [
      ['TIER_REQUIRED', 'Running on a schedule needs a higher tier than free'],
      ['QueryFailedError', 'duplicate key value violates unique constraint "runs_pkey"'],
    ] as const) {
      const fromHistory = await timelineFromHistory([failedWith(type, message)], codec, reference);
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

describe('timelineFromHistory: a run in an execution of its agent’s queue', () => {
  const at = (s: number) => ({ seconds: (1_800_000_000 + s) as never, nanos: 0 });
  const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });
  let id = 0;
  const scheduled = (type: string, input: unknown, s: number): temporal.api.history.v1.IHistoryEvent => ({
    eventId: (id += 1) as never,
    eventTime: at(s),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    activityTaskScheduledEventAttributes: { activityType: { name: type }, input: payloads(input) },
  });
  const completed = (of: temporal.api.history.v1.IHistoryEvent, result: unknown, s: number) => ({
    eventTime: at(s),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    activityTaskCompletedEventAttributes: { scheduledEventId: of.eventId, result: payloads(result) },
  });
  const timer = (summary: string | undefined, s: number): temporal.api.history.v1.IHistoryEvent => ({
    eventTime: at(s),
    eventType: EventType.EVENT_TYPE_TIMER_STARTED,
    timerStartedEventAttributes: { startToFireTimeout: { seconds: 2 as never } },
    ...(summary !== undefined ? { userMetadata: { summary: defaultPayloadConverter.toPayload(summary) } } : {}),
  });
  const turn = (text: string) => ({ content: [{ type: 'text', text }], text, stopReason: 'end_turn', usage: {} });

  // Two runs, one after the other, in one execution; the second's archive of the first runs beside it.
  const a1 = scheduled('modelTurn', { runId: 'run-a' }, 1);
  const a2 = scheduled('callTool', { runId: 'run-a', siteName: 'Notes', siteId: 's1', tool: 'find', input: {} }, 2);
  const aWait = timer('rate_limit', 3);
  const a3 = scheduled('callTool', { runId: 'run-a', siteName: 'Notes', siteId: 's1', tool: 'find', input: {} }, 5);
  const a4 = scheduled('modelTurn', { runId: 'run-a' }, 6);
  const archiveA = scheduled('archiveRun', { runId: 'run-a', status: 'completed' }, 7);
  const handOver = timer(undefined, 7); // the queue's own wait before it continues as new
  const b1 = scheduled('modelTurn', { runId: 'run-b' }, 8);
  const history = [
    {
      eventTime: at(0),
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: { input: payloads({ agentId: 'agent' }) },
    },
    a1,
    completed(a1, turn('first a'), 1),
    a2,
    aWait,
    a3,
    completed(a3, { result: { n: 1 }, durationMs: 4, refreshed: false }, 5),
    a4,
    completed(a4, turn('answer a'), 6),
    archiveA,
    completed(archiveA, null, 7),
    handOver,
    b1,
    completed(b1, turn('answer b'), 8),
    { eventTime: at(9), eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW },
  ];
  const triggered = { at: new Date(0).toISOString(), type: 'triggered' as const, triggeredBy: 'webhook' as const };

  it('keeps only that run’s activities and rate-limit waits, its trigger and end from its row, its answer from its last turn', async () => {
    const timeline = await timelineFromHistory(
      history,
      codec,
      {},
      {
        runId: 'run-a',
        triggered,
        ended: terminalEntry({ status: 'completed' }, new Date(6_500).toISOString()),
      },
    );
    expect(timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'waiting',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(timeline[3]).toMatchObject({ reason: 'rate_limited' });
    expect(timeline.at(-1)).toMatchObject({ type: 'completed', output: 'answer a' });
    const b = await timelineFromHistory(history, codec, {}, { runId: 'run-b', triggered });
    // Still going (no end in its row): nothing of run a, not the queue's own timer, no end.
    expect(b.map((e) => e.type)).toEqual(['triggered', 'model_turn']);
    expect(b[1]).toMatchObject({ text: 'answer b' });
  });

  it('shows the execution cut short under a run that had not ended, and not under one that had', async () => {
    const terminated = {
      eventTime: at(9),
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
      workflowExecutionTerminatedEventAttributes: { reason: 'by an operator' },
    };
    const cut = [...history.slice(0, -1), terminated];
    const b = await timelineFromHistory(cut, codec, {}, { runId: 'run-b', triggered });
    expect(b.at(-1)).toMatchObject({ type: 'failed', code: 'TERMINATED', error: 'by an operator' });
    const a = await timelineFromHistory(
      cut,
      codec,
      {},
      {
        runId: 'run-a',
        triggered,
        ended: terminalEntry({ status: 'completed' }, new Date(6_500).toISOString()),
      },
    );
    expect(a.filter((e) => e.type === 'failed')).toEqual([]);
  });
});

describe('timelineFromHistory: a call that waited for a decision', () => {
  const at = (s: number) => ({ seconds: (1_800_000_000 + s) as never, nanos: 0 });
  const iso = (s: number) => new Date((1_800_000_000 + s) * 1000).toISOString();
  const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });
  let id = 100;
  const scheduled = (type: string, input: unknown, s: number): temporal.api.history.v1.IHistoryEvent => ({
    eventId: (id += 1) as never,
    eventTime: at(s),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    activityTaskScheduledEventAttributes: { activityType: { name: type }, input: payloads(input) },
  });
  const completed = (of: temporal.api.history.v1.IHistoryEvent, result: unknown, s: number) => ({
    eventTime: at(s),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    activityTaskCompletedEventAttributes: { scheduledEventId: of.eventId, result: payloads(result) },
  });
  const call = { siteName: 'Notes', siteId: 's1', tool: 'create_note', input: { title: 'x' } };
  const request = (runId: string, approvalId: string, s: number) =>
    scheduled(
      'requestApproval',
      { runId, approvalId, ...call, scope: 'write', requestedAt: iso(s), expiresAt: iso(s + 60) },
      s,
    );
  const settle = (runId: string, approvalId: string, status: string, by: unknown, note: string | null, s: number) =>
    scheduled('settleApproval', { runId, approvalId, status, by, note, decidedAt: iso(s) }, s);
  const triggered = { at: new Date(0).toISOString(), type: 'triggered' as const, triggeredBy: 'manual' as const };
  const by = { userId: 'u1', name: 'Ada' };

  const r1 = request('run-a', 'ap-1', 2);
  const s1 = settle('run-a', 'ap-1', 'approved', by, 'go ahead', 10);
  const t1 = scheduled('callTool', { runId: 'run-a', ...call }, 11);
  const r2 = request('run-a', 'ap-2', 12);
  const s2 = settle('run-a', 'ap-2', 'denied', by, null, 13);
  const r3 = request('run-a', 'ap-3', 14);
  const s3 = settle('run-a', 'ap-3', 'expired', null, null, 74);
  // Another run's wait in the same execution (its queue ran it later).
  const other = request('run-b', 'ap-9', 80);
  const history = [
    r1,
    completed(r1, null, 2),
    s1,
    completed(s1, null, 10),
    t1,
    completed(t1, { result: { id: 7 }, durationMs: 3, refreshed: false }, 11),
    r2,
    s2,
    r3,
    s3,
    other,
    settle('run-b', 'ap-9', 'cancelled', null, null, 81),
  ];

  it('shows the request with what the call was, then the decision (who, the note), then the call made', async () => {
    const timeline = await timelineFromHistory(history, codec, {}, { runId: 'run-a', triggered });
    expect(timeline.map((e) => e.type)).toEqual([
      'triggered',
      'approval_requested',
      'approval_decided',
      'tool_call',
      'tool_result',
      'approval_requested',
      'approval_decided',
      'approval_requested',
      'approval_decided',
    ]);
    expect(timeline[1]).toEqual({
      at: iso(2),
      type: 'approval_requested',
      approvalId: 'ap-1',
      site: 'Notes',
      siteId: 's1',
      tool: 'create_note',
      input: { title: 'x' },
      scope: 'write',
      expiresAt: iso(62),
    });
    expect(timeline[2]).toEqual({
      at: iso(10),
      type: 'approval_decided',
      approvalId: 'ap-1',
      decision: 'approve',
      by,
      note: 'go ahead',
    });
    expect(timeline[6]).toMatchObject({ approvalId: 'ap-2', decision: 'deny', by, note: null });
    expect(timeline[8]).toMatchObject({ approvalId: 'ap-3', decision: 'expired', by: null, note: null });
  });

  it('keeps another run’s waits out, and names a cancelled wait as such', async () => {
    const b = await timelineFromHistory(history, codec, {}, { runId: 'run-b', triggered });
    expect(b.map((e) => (e.type === 'approval_decided' ? e.decision : e.type))).toEqual([
      'triggered',
      'approval_requested',
      'cancelled',
    ]);
  });
});
