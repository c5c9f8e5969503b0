/**
 * BENCH_TRACE for benchmark 8: where a run's time goes under load, from the Temporal history of the
 * execution that ran it, by kind of wait, summed over the run and then the median over the runs.
 *
 * - `intake`: from the request (the webhook's POST, or the bare workflow's start call) to its first
 *   event in the history (the signal, or the start);
 * - `wft_queued` / `wft_running`: workflow tasks waiting for a worker / being processed by it;
 * - `act_queued` / `act_running`: activity tasks waiting for a worker / being executed;
 * - `to_seen`: from the run's last event to the moment the bench saw it end;
 * - `other`: the rest (between a task's completion and the next task's schedule).
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { fmt, percentile } from './stats.js';

export type Events = NonNullable<
  Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']
>;
type Event = Events[number];

export const PHASES = ['intake', 'wft_queued', 'wft_running', 'act_queued', 'act_running', 'other', 'to_seen'] as const;
export type Phase = (typeof PHASES)[number];

const EventType = proto.temporal.api.enums.v1.EventType;

/**
 * The events that close a task's wait or its work: the phase they end, and the id of the event that
 * began it (the task's scheduled event, or its started one).
 */
const TASK_SPANS = new Map<number, { phase: Phase; earlierId: (e: Event) => unknown }>([
  [
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    { phase: 'wft_queued', earlierId: (e) => e.workflowTaskStartedEventAttributes?.scheduledEventId },
  ],
  [
    EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    { phase: 'wft_running', earlierId: (e) => e.workflowTaskCompletedEventAttributes?.startedEventId },
  ],
  [
    EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
    { phase: 'act_queued', earlierId: (e) => e.activityTaskStartedEventAttributes?.scheduledEventId },
  ],
  [
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    { phase: 'act_running', earlierId: (e) => e.activityTaskCompletedEventAttributes?.startedEventId },
  ],
]);

/** An event's time, in wall-clock ms. */
export function at(e: Event): number {
  return Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;
}

/**
 * The phases of one run: the events of `events` between `from` and `to` (wall-clock ms). Tasks are
 * timed from their scheduled event to their started one and from that to their completion; an
 * activity's started event is written with its completion, but carries the time it started.
 */
export function runPhases(events: Events, from: number, to: number): Record<Phase, number> | undefined {
  const within = events.filter((e) => at(e) >= from - 1 && at(e) <= to + 1);
  if (within.length === 0) {
    return undefined;
  }
  const sums: Record<Phase, number> = {
    intake: at(within[0]!) - from,
    wft_queued: 0,
    wft_running: 0,
    act_queued: 0,
    act_running: 0,
    other: 0,
    to_seen: 0,
  };
  const byId = new Map<number, Event>();
  for (const e of within) {
    byId.set(Number(e.eventId), e);
  }
  let covered = 0;
  for (const e of within) {
    const span = TASK_SPANS.get(e.eventType ?? 0);
    const earlier = span === undefined ? undefined : byId.get(Number(span.earlierId(e)));
    if (span !== undefined && earlier !== undefined) {
      sums[span.phase] += at(e) - at(earlier);
      covered += at(e) - at(earlier);
    }
  }
  const last = at(within.at(-1)!);
  sums.to_seen = to - last;
  sums.other = Math.max(0, last - at(within[0]!) - covered);
  return sums;
}

/** Every event of a workflow id's executions (a queue's chain of continue-as-new), oldest first. */
export async function historiesOf(client: Client, workflowId: string): Promise<Events> {
  const events: Events = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    events.push(...((await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? []));
  }
  return events;
}

/** The median of each phase over the runs, in ms. */
export function medianPhases(rows: Array<Record<Phase, number>>): Record<Phase, number> {
  const out = {} as Record<Phase, number>;
  for (const phase of PHASES) {
    const sorted = rows.map((r) => r[phase]).sort((a, b) => a - b);
    out[phase] = sorted[Math.floor(sorted.length / 2)] ?? 0;
  }
  return out;
}

/**
 * BENCH_TRACE: the medians over every measured pair of benchmark 2 of where the time went, in ms:
 * until the run's workflow (or the bare one) schedules its first activity, its activities (first
 * scheduled to last completed), from the last activity to the workflow's close, and from the close
 * until the bench saw the result.
 */
export async function tracePhases(
  client: Client,
  runAgentId: string,
  pairs: Array<{ runId: string; postAt: number; bareId: string; bareAt: number; s: number; b: number }>,
): Promise<void> {
  const EventType = proto.temporal.api.enums.v1.EventType;
  /** The activities between `from` and `from + total` (a run's, in its queue's execution), and when it was seen. */
  const phases = (events: Events, from: number, total: number): number[] => {
    const within = events.filter((e) => at(e) >= from && at(e) <= from + total);
    const scheduled = within.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    const completed = within.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    return [at(scheduled[0]!) - from, at(completed.at(-1)!) - at(scheduled[0]!), from + total - at(completed.at(-1)!)];
  };
  const median = (rows: number[][], k: number): string =>
    fmt(
      percentile(
        rows.map((r) => r[k]!),
        50,
      ),
    );
  // The agent's queue executions, each history once.
  const queueEvents: Events = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = "agent-${runAgentId}"` })) {
    queueEvents.push(...((await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? []));
  }
  const service: number[][] = [];
  const bare: number[][] = [];
  for (const pair of pairs) {
    service.push(phases(queueEvents, pair.postAt, pair.s));
    bare.push(phases((await client.workflow.getHandle(pair.bareId).fetchHistory()).events ?? [], pair.bareAt, pair.b));
  }
  // The slowest runs of each side, event by event (ms after the run was asked for): where a tail run waited.
  const timeline = (events: Events, from: number, total: number): string =>
    events
      .filter((e) => at(e) >= from && at(e) <= from + total)
      .map((e) => `${(EventType[e.eventType ?? 0] ?? '?').replace('EVENT_TYPE_', '')} +${fmt(at(e) - from)}`)
      .join(', ');
  const slowest = (key: 's' | 'b') => [...pairs].sort((x, y) => y[key] - x[key]).slice(0, 3);
  for (const pair of slowest('s')) {
    console.log(`trace slow service run (${fmt(pair.s)}): ${timeline(queueEvents, pair.postAt, pair.s)}`);
  }
  for (const pair of slowest('b')) {
    const events = (await client.workflow.getHandle(pair.bareId).fetchHistory()).events ?? [];
    console.log(`trace slow bare run (${fmt(pair.b)}): ${timeline(events, pair.bareAt, pair.b)}`);
  }
  for (const [name, rows] of [
    ['service', service],
    ['bare', bare],
  ] as const) {
    console.log(
      `trace phases (${name}, medians of ${rows.length}): to first activity ${median(rows, 0)}, ` +
        `activities ${median(rows, 1)}, last activity to seen ${median(rows, 2)}`,
    );
  }
}
