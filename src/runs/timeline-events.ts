import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

export function toMs(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!ts) {
    return 0;
  }
  return Number(String(ts.seconds ?? 0)) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

/** The first payload of decoded payloads, converted (JSON). */
export function first<T>(payloads: Payloads): T | undefined {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<T>(payload) : undefined;
}

/**
 * What every run's timeline reads of an event, computed once per history: the archive of an
 * execution's runs builds each of its (up to 20) runs' timelines from the same events, and converted
 * them all again for each run (the event's time, an activity's input, a timer's summary).
 */
export class EventValues {
  private readonly times = new WeakMap<HistoryEvent, string>();
  private readonly inputs = new WeakMap<HistoryEvent, unknown>();
  private readonly summaries = new WeakMap<HistoryEvent, string | undefined>();

  /** The event's time, ISO 8601. */
  at(event: HistoryEvent): string {
    let at = this.times.get(event);
    if (at === undefined) {
      at = new Date(toMs(event.eventTime)).toISOString();
      this.times.set(event, at);
    }
    return at;
  }

  /** A scheduled activity's input (its first payload). */
  activityInput(event: HistoryEvent): unknown {
    if (!this.inputs.has(event)) {
      this.inputs.set(event, first<unknown>(event.activityTaskScheduledEventAttributes?.input));
    }
    return this.inputs.get(event);
  }

  /** A timer's summary (its user metadata). */
  timerSummary(event: HistoryEvent): string | undefined {
    if (!this.summaries.has(event)) {
      const payload = event.userMetadata?.summary;
      this.summaries.set(event, payload ? defaultPayloadConverter.fromPayload<string>(payload) : undefined);
    }
    return this.summaries.get(event);
  }
}
