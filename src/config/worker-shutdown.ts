/**
 * How long the worker drains after SIGTERM (WORKER_SHUTDOWN_GRACE_SECONDS): it stops taking tasks at
 * once, and lets the activities in flight finish for up to this long before it cancels them. Longer
 * than the longest activity's startToCloseTimeout, so a call that may still succeed is never cut (a
 * cut tool call would be retried on another worker: the site would see it twice).
 */

/**
 * The longest startToCloseTimeout of any activity in workflows/*.ts (the run retention's batch, 5
 * minutes; model turns 3, tool calls 45 s). worker-shutdown.spec.ts reads the workflows and keeps this true.
 */
export const LONGEST_ACTIVITY_TIMEOUT_SECONDS = 300;

/** The default grace: the longest activity, and half a minute to report its result. */
export const DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS = LONGEST_ACTIVITY_TIMEOUT_SECONDS + 30;

/** Parses WORKER_SHUTDOWN_GRACE_SECONDS (raw: the trimmed value, undefined when unset); problems are collected. */
export function parseWorkerShutdownGrace(raw: string | undefined, problems: string[]): number {
  if (raw === undefined) {
    return DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS;
  }
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value <= LONGEST_ACTIVITY_TIMEOUT_SECONDS || value > 86_400) {
    problems.push(
      `WORKER_SHUTDOWN_GRACE_SECONDS must be a whole number of seconds above ${LONGEST_ACTIVITY_TIMEOUT_SECONDS} ` +
        `(the longest activity's timeout) and at most 86400, got "${raw}"`,
    );
    return DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS;
  }
  return value;
}
