import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogFields } from './log-format.js';

/**
 * The ids every log line of the current unit of work carries: an HTTP request in the API (its
 * request id, then the user once authenticated, the agent and run it starts), an activity in the
 * worker (the run's ids from its input). One mutable object per unit, so ids learnt later in the
 * request (the user, after authentication) reach the lines written after, and the access log line.
 */
const storage = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` as the current log fields (the same object: later additions are seen). */
export function runWithLogFields<T>(fields: LogFields, fn: () => T): T {
  // Already current (a request resumed where its context was not lost): nothing to enter.
  return storage.getStore() === fields ? fn() : storage.run(fields, fn);
}

/** The current unit's log fields, if any. */
export function currentLogFields(): LogFields | undefined {
  return storage.getStore();
}

/** The request id of the current request (or of the run an activity belongs to). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** Adds ids to the current unit's log fields (no-op outside one); `undefined` values are ignored. */
export function addLogFields(fields: LogFields): void {
  const store = storage.getStore();
  if (store === undefined) {
    return;
  }
  for (const [key, value] of Object.entries(fields) as Array<[keyof LogFields, string | undefined]>) {
    if (value !== undefined) {
      store[key] = value;
    }
  }
}
