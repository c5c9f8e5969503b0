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
