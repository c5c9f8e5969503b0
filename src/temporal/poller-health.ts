/**
 * Whether a worker is really polling, judged by the only party that knows: the Temporal server, which
 * records each poller's identity and the time of its last poll per task queue. A worker process that
 * runs but cannot reach Temporal (network, TLS, API key, a dead connection) stops appearing there.
 */

/** The part of DescribeTaskQueue's PollerInfo this check reads. */
export interface PollerSeen {
  identity?: string | null;
  /** Epoch milliseconds of the poller's last poll. */
  lastAccessMs: number | undefined;
}

/**
 * An idle worker's long poll lasts up to a minute (the server's long-poll interval) before the next
 * one starts, so a live worker's last poll may be that old; two minutes leaves room for one reconnect.
 */
export const DEFAULT_POLL_MAX_AGE_MS = 120_000;

export type PollerVerdict = { healthy: true; identity: string; ageMs: number } | { healthy: false; reason: string };

/**
 * Healthy when a poller whose identity ends with `@host` (the worker's identity is `pid@host`, and in
 * a container the host name is the container's own) polled within `maxAgeMs` before `now`.
 */
export function judgePollers(
  pollers: readonly PollerSeen[],
  host: string,
  now: number,
  maxAgeMs: number,
): PollerVerdict {
  const ours = pollers.filter((poller) => poller.identity?.endsWith(`@${host}`) === true);
  if (ours.length === 0) {
    return { healthy: false, reason: `no worker on ${host} has polled this task queue` };
  }
  const newest = ours.reduce((best, poller) => ((poller.lastAccessMs ?? 0) > (best.lastAccessMs ?? 0) ? poller : best));
  const ageMs = now - (newest.lastAccessMs ?? 0);
  if (ageMs > maxAgeMs) {
    return {
      healthy: false,
      reason: `the last poll of ${newest.identity} was ${Math.round(ageMs / 1000)} s ago (more than ${Math.round(maxAgeMs / 1000)} s)`,
    };
  }
  return { healthy: true, identity: newest.identity!, ageMs };
}

/** Epoch milliseconds of a protobuf Timestamp (seconds may be a Long). */
export function timestampMs(
  ts: { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined,
): number | undefined {
  if (ts?.seconds === undefined || ts.seconds === null) {
    return undefined;
  }
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

/**
 * Whether a poller polled within `maxAgeMs` before `now`: any poller, or only the one whose identity
 * is `identity` (a worker asking about itself).
 */
export function hasRecentPoller(
  pollers: readonly PollerSeen[],
  now: number,
  maxAgeMs: number,
  identity?: string,
): boolean {
  return pollers.some(
    (poller) =>
      (identity === undefined || poller.identity === identity) &&
      poller.lastAccessMs !== undefined &&
      now - poller.lastAccessMs <= maxAgeMs,
  );
}
