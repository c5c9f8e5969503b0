import { describe, expect, it } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import proto, { type temporal } from '@temporalio/proto';
import { AesGcmPayloadCodec } from '../temporal/payload-codec.js';
import { runTimelinesFromHistory, terminalEntry, timelineFromHistory } from './timeline.js';

const codec = new AesGcmPayloadCodec([{ id: 't1', key: Buffer.alloc(32, 1) }]);
const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const at = (s: number) => ({ seconds: (1_800_000_000 + s) as never, nanos: 0 });
const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });

/** Run `runId`'s model turn and tool call in a queue's execution, from second `s` on (the call left open when asked). */
function runEvents(runId: string, first: number, s: number, callOpen = false): HistoryEvent[] {
  const turn = {
    eventId: first as never,
    eventTime: at(s),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    activityTaskScheduledEventAttributes: { activityType: { name: 'modelTurn' }, input: payloads({ runId }) },
  };
  const call = {
    eventId: (first + 2) as never,
    eventTime: at(s + 2),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    activityTaskScheduledEventAttributes: {
      activityType: { name: 'callTool' },
      input: payloads({ runId, siteName: 'Notes', siteId: 's1', tool: 'find', input: { q: runId } }),
    },
  };
  const completed = (of: HistoryEvent, result: unknown, after: number): HistoryEvent => ({
    eventTime: at(after),
    eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    activityTaskCompletedEventAttributes: { scheduledEventId: of.eventId, result: payloads(result) },
  });
  const answer = { content: [{ type: 'text', text: runId }], text: runId, stopReason: 'end_turn', usage: {} };
  return [turn, completed(turn, answer, s + 1), call, ...(callOpen ? [] : [completed(call, { result: 1 }, s + 3)])];
}

describe('runTimelinesFromHistory: the runs of one queue execution read at once (their archive)', () => {
  const triggered = { at: new Date(0).toISOString(), type: 'triggered' as const, triggeredBy: 'webhook' as const };
  const ended = terminalEntry({ status: 'completed' }, new Date(0).toISOString());
  const runs = [
    { runId: 'run-a', triggered, ended },
    { runId: 'run-b', triggered, ended },
    { runId: 'run-c', triggered },
  ];
  const history = [...runEvents('run-a', 1, 0), ...runEvents('run-b', 10, 10), ...runEvents('run-c', 20, 20, true)];

  it('gives each run the timeline it has alone, and which still has a step open', async () => {
    const alone = await Promise.all(runs.map((run) => timelineFromHistory(history, codec, {}, run)));
    const together = await runTimelinesFromHistory(history, codec, {}, runs);
    expect(together.map((r) => r.timeline)).toEqual(alone);
    expect(together.map((r) => r.open)).toEqual([false, false, true]);
    // Each run's own call, not another's (the inputs are converted once and shared by the runs' reads).
    expect(together.map((r) => r.timeline.find((e) => e.type === 'tool_call'))).toMatchObject([
      { input: { q: 'run-a' } },
      { input: { q: 'run-b' } },
      { input: { q: 'run-c' } },
    ]);
  });

  it('lets the event loop in between runs (the archive of 20 runs took 45 ms of a worker’s loop at once)', async () => {
    let turnedOver = false;
    const reading = runTimelinesFromHistory(history, codec, {}, runs);
    setImmediate(() => (turnedOver = true));
    await reading;
    expect(turnedOver).toBe(true);
  });
});
