import type { EnvReader } from './env-reader.js';
import { readTemporalConnectSettings, type TemporalConnectSettings } from './temporal-connect.js';

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

/** The worker's settings beside its HTTP server: its drain on SIGTERM, and how its polls are judged. */
export interface WorkerSettings extends TemporalConnectSettings {
  /** Seconds the worker lets in-flight activities finish after SIGTERM (above the longest activity timeout). */
  workerShutdownGraceSeconds: number;
  /**
   * How recent a worker's last poll must be for readiness to count it (WORKER_POLL_MAX_AGE_SECONDS):
   * above the Temporal server's long-poll expiry (`matching.longPollExpirationInterval`, 60 s by
   * default), since an idle worker polls again only once its long poll expires.
   */
  workerPollMaxAgeSeconds: number;
  /**
   * The wait after a notification's first failed attempt (NOTIFICATION_RETRY_INITIAL_SECONDS), doubling
   * up to an hour. 10 s, the notification workflow's own retry policy; another value (the tests' 1 s)
   * is applied by the activity through Temporal's next-retry delay.
   */
  notificationRetryInitialSeconds: number;
}

/** The default: two idle long polls of a default Temporal server. */
export const DEFAULT_WORKER_POLL_MAX_AGE_SECONDS = 120;

/**
 * Reads WORKER_SHUTDOWN_GRACE_SECONDS, WORKER_POLL_MAX_AGE_SECONDS, NOTIFICATION_RETRY_INITIAL_SECONDS and
 * TEMPORAL_CONNECT_TIMEOUT_SECONDS.
 */
export function readWorkerSettings(reader: EnvReader, problems: string[]): WorkerSettings {
  return {
    workerShutdownGraceSeconds: parseWorkerShutdownGrace(reader.str('WORKER_SHUTDOWN_GRACE_SECONDS'), problems),
    workerPollMaxAgeSeconds: reader.int('WORKER_POLL_MAX_AGE_SECONDS', DEFAULT_WORKER_POLL_MAX_AGE_SECONDS, 5, 3600),
    notificationRetryInitialSeconds: reader.int('NOTIFICATION_RETRY_INITIAL_SECONDS', 10, 1, 3600),
    ...readTemporalConnectSettings(reader),
  };
}
