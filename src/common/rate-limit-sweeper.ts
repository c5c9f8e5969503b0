/*
 * Deletes the rate-limit counters whose window ended. Every limiter writes rows to the shared
 * rate_limits table (a key per client address, user, sign-in account, outgoing domain, plus one
 * heartbeat row per second); nothing else removes them. Each process that counts sweeps on its own
 * timer with jitter (the processes do not sweep in step), a bounded batch per statement and a bounded
 * number of statements per sweep, so the table holds about the keys of the windows still open.
 */

/** The store's part the sweeper needs (PostgreSQL in production, a fake in unit tests). */
export interface ExpiredCounters {
  /** Deletes at most `max` rows whose window ended before `now` (epoch ms); answers how many it deleted. */
  deleteExpired(now: number, max: number): Promise<number>;
}

/** Rows per DELETE: one statement stays short however many keys expired. */
export const SWEEP_BATCH = 1000;
/** Statements per sweep at most: a sweep deletes up to 20,000 rows, the next sweep goes on. */
export const SWEEP_MAX_BATCHES = 20;
/** The longest pause between two sweeps of a process (the limits with long windows). */
export const SWEEP_MAX_INTERVAL_MS = 30_000;
const SWEEP_MIN_INTERVAL_MS = 1000;

/** A sweep about twice per window (so a window's rows are gone within about 1.5 windows), 1 s to 30 s. */
export function sweepIntervalFor(windowSeconds: number): number {
  return Math.min(Math.max((windowSeconds * 1000) / 2, SWEEP_MIN_INTERVAL_MS), SWEEP_MAX_INTERVAL_MS);
}

export interface SweeperOptions {
  batch?: number;
  maxBatches?: number;
  now?: () => number;
  random?: () => number;
}

export class ExpiredCounterSweeper {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly batch: number;
  private readonly maxBatches: number;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly store: ExpiredCounters,
    private intervalMs: number,
    options: SweeperOptions = {},
  ) {
    this.batch = options.batch ?? SWEEP_BATCH;
    this.maxBatches = options.maxBatches ?? SWEEP_MAX_BATCHES;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** Starts the timer (once); a shorter interval asked by another limiter of the process wins. */
  start(intervalMs = this.intervalMs): void {
    this.intervalMs = Math.min(this.intervalMs, intervalMs);
    if (this.timer === undefined && !this.stopped) {
      this.schedule();
    }
  }

  /** One sweep: batches until one deletes fewer than a full batch, at most maxBatches. Answers the rows deleted. */
  async sweep(): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < this.maxBatches; i += 1) {
      const n = await this.store.deleteExpired(this.now(), this.batch);
      deleted += n;
      if (n < this.batch) {
        break;
      }
    }
    return deleted;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private schedule(): void {
    // Jitter: between half and one and a half intervals, so processes started together drift apart.
    const delay = this.intervalMs * (0.5 + this.random());
    this.timer = setTimeout(() => {
      // Not critical: a failed sweep (database away, pool closing) leaves the rows to the next one.
      void this.sweep()
        .catch(() => 0)
        .finally(() => {
          this.timer = undefined;
          if (!this.stopped) {
            this.schedule();
          }
        });
    }, delay);
    this.timer.unref();
  }
}
