import { RateLimiterRes } from 'rate-limiter-flexible';

/** How long local points may wait before they are sent (the reconciler also sends sooner, see allowance). */
export const FLUSH_INTERVAL_MS = 100;
/** How often a process says it is counting (and learns how many processes count), per process. */
export const HEARTBEAT_INTERVAL_MS = 1000;
/** Of the limit, what the processes may admit beyond it together: 10 %. */
export const TOLERANCE = 0.1;

/** One key's points to add, and the window a fresh row would get. */
export interface CounterAdd {
  key: string;
  points: number;
  /** Epoch ms the window ends if this add starts it. */
  expire: number;
}

/** The shared counters (PostgreSQL in production, a fake in unit tests). */
export interface CounterStore {
  /** Adds the points in one statement; answers each key's count and window end after the add. */
  add(adds: CounterAdd[], now: number): Promise<Map<string, { points: number; expire: number }>>;
  /** Records a beat of this process in the current second; answers the processes seen in the last two seconds. */
  heartbeat(now: number): Promise<number>;
}

export interface ReconcilerOptions {
  flushIntervalMs?: number;
  heartbeatIntervalMs?: number;
  now?: () => number;
}

/** What the limiter knows of one key in this process. */
interface KeyState {
  limit: number;
  durationMs: number;
  /** The key's count in the store after this process's last add (0 when unknown). */
  known: number;
  /** End of the window `known` belongs to (0 when unknown). */
  expire: number;
  /** Points admitted here and not sent yet. */
  pending: number;
  /** Points admitted here and sent, without an answer yet. */
  inflight: number;
  /** Requests of the exact path sent, without an answer yet (the key's state must outlive them). */
  sent: number;
  /** Requests that wait for the store's count to be admitted or refused (the exact path). */
  waiters: Array<{ resolve: (res: RateLimiterRes) => void; reject: (err: unknown) => void }>;
}

/**
 * Counts API requests in this process and reconciles the counts with the store: a request is
 * admitted at once while this process's points the store has not confirmed stay under a small
 * allowance; past it (and near the limit, and whenever the allowance is 0) the request waits for the
 * store's count, as an exact limiter would. Every process's unconfirmed points are at most
 * `allowance = floor(limit × 10 % / (2 × (processes + 1)))`; once the store's count reaches the limit,
 * each process admits at most its unconfirmed points plus one more allowance before its next answer
 * tells it so. Hence at most `2 × processes × allowance` < 10 % of the limit beyond it, never fewer
 * than the limit before the first refusal. Small limits (allowance 0) are exact. All keys' points go
 * in one statement per flush (every FLUSH_INTERVAL_MS, sooner when an allowance is spent or a
 * request waits); at most one statement is in flight per process.
 */
export class RateLimitReconciler {
  private readonly keys = new Map<string, KeyState>();
  private readonly flushIntervalMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly now: () => number;
  /** Processes counting (from the heartbeats); undefined until known or after a store failure: exact mode. */
  private processes: number | undefined;
  private flushing = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: CounterStore,
    options: ReconcilerOptions = {},
  ) {
    this.flushIntervalMs = options.flushIntervalMs ?? FLUSH_INTERVAL_MS;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS;
    this.now = options.now ?? Date.now;
  }

  /** A limiter of `points` per fixed window of `durationSeconds`, its keys prefixed like rate-limiter-flexible's. */
  limiter(keyPrefix: string, points: number, durationSeconds: number): ReconciledLimiter {
    return new ReconciledLimiter(this, keyPrefix, points, durationSeconds * 1000);
  }

  /** Points this process may admit for a key without the store's answer. */
  allowance(limit: number): number {
    if (this.processes === undefined) {
      return 0;
    }
    // +1: a process that starts counting is known to the others only after its first heartbeats.
    return Math.floor(Math.floor(limit * TOLERANCE) / (2 * (this.processes + 1)));
  }

  /** Resolves with the request admitted, rejects with a RateLimiterRes (refused) or the store's error. */
  consume(key: string, limit: number, durationMs: number): Promise<RateLimiterRes> {
    this.startHeartbeat();
    const now = this.now();
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { limit, durationMs, known: 0, expire: 0, pending: 0, inflight: 0, sent: 0, waiters: [] };
      this.keys.set(key, state);
    }
    if (state.expire !== 0 && now >= state.expire) {
      // The window ended: what the store said of it no longer counts.
      state.known = 0;
      state.expire = 0;
    }
    if (state.expire !== 0 && state.known >= limit) {
      // The store already counted the whole limit in this window: refused without asking again.
      return Promise.reject(new RateLimiterRes(0, state.expire - now, state.known + 1, false));
    }
    const unconfirmed = state.pending + state.inflight;
    const allowance = this.allowance(limit);
    if (unconfirmed < allowance && state.known + unconfirmed < limit) {
      state.pending += 1;
      if (state.pending + state.inflight >= allowance) {
        this.flushSoon(0);
      } else {
        this.flushSoon(this.flushIntervalMs);
      }
      return Promise.resolve(
        new RateLimiterRes(limit - state.known - unconfirmed - 1, state.expire === 0 ? durationMs : state.expire - now),
      );
    }
    const waiting = new Promise<RateLimiterRes>((resolve, reject) => state.waiters.push({ resolve, reject }));
    this.flushSoon(0);
    return waiting;
  }

  /** Sends what is pending now (timers, tests, shutdown); while a statement is in flight, that one schedules the next. */
  async flush(): Promise<void> {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.flushing) {
      return;
    }
    const batch: Array<{ key: string; state: KeyState; fast: number; waiters: KeyState['waiters'] }> = [];
    for (const [key, state] of this.keys) {
      if (state.pending > 0 || state.waiters.length > 0) {
        batch.push({ key, state, fast: state.pending, waiters: state.waiters });
        state.inflight += state.pending;
        state.sent += state.waiters.length;
        state.pending = 0;
        state.waiters = [];
      }
    }
    if (batch.length === 0) {
      return;
    }
    // One order for every process: two statements then lock their rows in the same order (no deadlock).
    batch.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.flushing = true;
    const now = this.now();
    let failed = false;
    try {
      const counts = await this.store.add(
        batch.map((b) => ({ key: b.key, points: b.fast + b.waiters.length, expire: now + b.state.durationMs })),
        now,
      );
      const answeredAt = this.now();
      for (const { key, state, fast, waiters } of batch) {
        state.inflight -= fast;
        state.sent -= waiters.length;
        const count = counts.get(key);
        if (count === undefined) {
          const missing = new Error(`the rate limit store did not answer for ${key}`);
          waiters.forEach((w) => w.reject(missing));
          continue;
        }
        state.known = count.points;
        state.expire = count.expire;
        // The waiting requests are the batch's last points, in the order they came.
        waiters.forEach((waiter, i) => {
          const consumed = count.points - waiters.length + i + 1;
          const msBeforeNext = Math.max(count.expire - answeredAt, 0);
          if (consumed <= state.limit) {
            waiter.resolve(new RateLimiterRes(state.limit - consumed, msBeforeNext, consumed, false));
          } else {
            waiter.reject(new RateLimiterRes(0, msBeforeNext, consumed, false));
          }
        });
      }
    } catch (err) {
      // Nothing was counted: the admitted points are sent again later, and until the store answers
      // again every request waits for it (and fails with it), as with an exact limiter.
      this.processes = undefined;
      failed = true;
      for (const { state, fast, waiters } of batch) {
        state.inflight -= fast;
        state.sent -= waiters.length;
        state.pending += fast;
        waiters.forEach((w) => w.reject(err));
      }
    } finally {
      this.flushing = false;
    }
    let waiting = false;
    let pending = false;
    for (const state of this.keys.values()) {
      waiting ||= state.waiters.length > 0 || (state.pending > 0 && state.pending >= this.allowance(state.limit));
      pending ||= state.pending > 0;
    }
    if (failed) {
      // Not at once again: the requests that come meanwhile ask the store themselves.
      this.flushSoon(this.flushIntervalMs);
    } else if (waiting) {
      this.flushSoon(0);
    } else if (pending) {
      this.flushSoon(this.flushIntervalMs);
    }
  }

  /** Stops the timers after sending what is pending (application shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeatTimer !== undefined) {
      clearTimeout(this.heartbeatTimer);
      this.heartbeatTimer = undefined;
    }
    await this.flush().catch(() => undefined);
  }

  private flushSoon(delayMs: number): void {
    if (this.flushing) {
      // The flush in flight schedules the next one when it ends.
      return;
    }
    if (this.flushTimer !== undefined) {
      if (delayMs > 0) {
        return;
      }
      clearTimeout(this.flushTimer);
    }
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, delayMs);
    this.flushTimer.unref();
  }

  private startHeartbeat(): void {
    if (this.heartbeatTimer !== undefined || this.closed) {
      return;
    }
    const beat = (): void => {
      const now = this.now();
      this.store.heartbeat(now).then(
        (seen) => {
          // This process counts too, even before its own heartbeat shows.
          this.processes = Math.max(seen, 1);
        },
        () => {
          this.processes = undefined;
        },
      );
      this.forgetEnded(now);
      if (!this.closed) {
        this.heartbeatTimer = setTimeout(beat, this.heartbeatIntervalMs);
        this.heartbeatTimer.unref();
      }
    };
    beat();
  }

  /** Drops the keys whose window ended and that have nothing to send (a process sees many addresses). */
  private forgetEnded(now: number): void {
    for (const [key, state] of this.keys) {
      if (
        state.pending === 0 &&
        state.inflight === 0 &&
        state.sent === 0 &&
        state.waiters.length === 0 &&
        (state.expire === 0 || now >= state.expire)
      ) {
        this.keys.delete(key);
      }
    }
  }
}

/** The limiter object the guards use: `consume(key)` as rate-limiter-flexible's, rejecting with RateLimiterRes. */
export class ReconciledLimiter {
  readonly keyPrefix: string;

  constructor(
    private readonly reconciler: RateLimitReconciler,
    keyPrefix: string,
    readonly points: number,
    private readonly durationMs: number,
  ) {
    this.keyPrefix = keyPrefix;
  }

  consume(key: string | number): Promise<RateLimiterRes> {
    return this.reconciler.consume(`${this.keyPrefix}:${key}`, this.points, this.durationMs);
  }
}
