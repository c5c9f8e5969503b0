import { afterEach, describe, expect, it } from '@jest/globals';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { type CounterAdd, type CounterStore, RateLimitReconciler } from './reconciled-rate-limit.js';

/** The shared table in memory, as PostgreSQL answers it: each add takes `latencyMs`, rows reset when their window ends. */
class FakeStore implements CounterStore {
  readonly rows = new Map<string, { points: number; expire: number }>();
  adds = 0;
  failing: Error | undefined;

  constructor(
    private readonly processes: number,
    private readonly latencyMs = 2,
  ) {}

  async add(adds: CounterAdd[], now: number): Promise<Map<string, { points: number; expire: number }>> {
    this.adds += 1;
    await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    if (this.failing) {
      throw this.failing;
    }
    const out = new Map<string, { points: number; expire: number }>();
    for (const add of adds) {
      const row = this.rows.get(add.key);
      const next =
        row === undefined || row.expire <= now
          ? { points: add.points, expire: add.expire }
          : { points: row.points + add.points, expire: row.expire };
      this.rows.set(add.key, next);
      out.set(add.key, { ...next });
    }
    return out;
  }

  async heartbeat(): Promise<number> {
    if (this.failing) {
      throw this.failing;
    }
    return this.processes;
  }
}

/** A consume settled: 'ok', the refusal, or the error. */
function outcome(call: Promise<RateLimiterRes>): Promise<'ok' | RateLimiterRes | Error> {
  return call.then(
    () => 'ok' as const,
    (err: unknown) => err as RateLimiterRes | Error,
  );
}

function outcomes(calls: Array<Promise<RateLimiterRes>>): Promise<Array<'ok' | RateLimiterRes | Error>> {
  return Promise.all(calls.map(outcome));
}

const reconcilers: RateLimitReconciler[] = [];
function reconciler(store: CounterStore): RateLimitReconciler {
  const r = new RateLimitReconciler(store, { flushIntervalMs: 5, heartbeatIntervalMs: 20 });
  reconcilers.push(r);
  return r;
}

/** Until each reconciler has heard the processes' count (its first heartbeat answered). */
async function heartbeatsAnswered(...rs: RateLimitReconciler[]): Promise<void> {
  for (const r of rs) {
    // The first consume starts the heartbeat; its answer arrives on a later tick.
    await r.limiter('warm-up', 1000, 60).consume('x');
    while (r.allowance(1000) === 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
}

afterEach(async () => {
  await Promise.all(reconcilers.splice(0).map((r) => r.close()));
});

describe('RateLimitReconciler', () => {
  it('two processes hammering one key admit the limit, and at most 10 % more, with few statements', async () => {
    const store = new FakeStore(2);
    const [a, b] = [reconciler(store), reconciler(store)];
    await heartbeatsAnswered(a, b);
    const limit = 1000;
    // allowance = floor(100 / (2 × 3)) = 16 points each may admit before the store answers.
    expect(a.allowance(limit)).toBe(16);
    const [la, lb] = [a.limiter('api-user', limit, 60), b.limiter('api-user', limit, 60)];
    const addsBefore = store.adds;
    const calls: Array<Promise<'ok' | RateLimiterRes | Error>> = [];
    // Three times the limit, in bursts over both processes, as load balancers spread them.
    for (let round = 0; round < 30; round += 1) {
      for (let i = 0; i < 100; i += 1) {
        // Settled at once: refusals come while the loop still waits.
        calls.push(outcome((i % 2 === 0 ? la : lb).consume('u1')));
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const results = await Promise.all(calls);
    const admitted = results.filter((r) => r === 'ok').length;
    expect(admitted).toBeGreaterThanOrEqual(limit);
    expect(admitted).toBeLessThanOrEqual(limit * 1.1);
    for (const refused of results.filter((r) => r !== 'ok')) {
      expect(refused).toBeInstanceOf(RateLimiterRes);
      expect((refused as RateLimiterRes).msBeforeNext).toBeGreaterThan(50_000);
    }
    // Far fewer statements than requests: points travel in batches.
    expect(store.adds - addsBefore).toBeLessThan(calls.length / 5);
  });

  it('is exact when the allowance is 0 (small limits): the store answers every request, in batches', async () => {
    // Statements slower than the heartbeat: a key's state outlives its requests in flight.
    const store = new FakeStore(2, 50);
    const [a, b] = [reconciler(store), reconciler(store)];
    await heartbeatsAnswered(a, b);
    expect(a.allowance(10)).toBe(0);
    const [la, lb] = [a.limiter('api-ip', 10, 30), b.limiter('api-ip', 10, 30)];
    const results = await outcomes(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? la : lb).consume('1.2.3.4')));
    expect(results.filter((r) => r === 'ok')).toHaveLength(10);
    expect(store.rows.get('api-ip:1.2.3.4')?.points).toBe(20);
    // Once a process learned that the window is spent, it refuses without asking.
    const adds = store.adds;
    await expect(la.consume('1.2.3.4')).rejects.toBeInstanceOf(RateLimiterRes);
    expect(store.adds).toBe(adds);
    // Other keys are counted apart.
    await expect(lb.consume('5.6.7.8')).resolves.toBeInstanceOf(RateLimiterRes);
  });

  it('admits nothing on its own before it knows how many processes count', async () => {
    const store = new FakeStore(1);
    const r = reconciler(store);
    expect(r.allowance(100_000)).toBe(0);
    const limiter = r.limiter('api-user', 2, 60);
    const results = await outcomes([limiter.consume('u'), limiter.consume('u'), limiter.consume('u')]);
    expect(results.map((x) => x === 'ok')).toEqual([true, true, false]);
  });

  it('never falls back to a per-process count: when the store fails, requests fail and points are kept', async () => {
    const store = new FakeStore(1);
    const r = reconciler(store);
    await heartbeatsAnswered(r);
    const limiter = r.limiter('api-user', 1000, 60);
    // allowance = floor(100 / 4) = 25: these are admitted at once and sent in the background.
    await Promise.all(Array.from({ length: 10 }, () => limiter.consume('u')));
    store.failing = new Error('connection terminated');
    await r.flush();
    // (A statement already in flight fails too; either way the process stops admitting on its own.)
    while (r.allowance(1000) !== 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // Unknown processes now: every request waits for the store, and fails with it.
    for (let i = 0; i < 3; i += 1) {
      await expect(limiter.consume('u')).rejects.toThrow('connection terminated');
    }
    store.failing = undefined;
    await expect(limiter.consume('u')).resolves.toBeInstanceOf(RateLimiterRes);
    await r.flush();
    // The ten admitted before the failure were counted once it passed (the failed requests were not).
    expect(store.rows.get('api-user:u')?.points).toBe(11);
  });

  it('starts a new window when the stored one ends, with Retry-After from the stored window', async () => {
    let clock = 1_000_000;
    const store = new FakeStore(1, 0);
    const r = new RateLimitReconciler(store, { flushIntervalMs: 5, heartbeatIntervalMs: 10_000, now: () => clock });
    reconcilers.push(r);
    const limiter = r.limiter('api-user', 2, 30);
    await limiter.consume('u');
    clock += 10_000;
    await limiter.consume('u');
    const refused = await limiter.consume('u').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect((refused as RateLimiterRes).msBeforeNext).toBe(20_000);
    clock += 20_000;
    await expect(limiter.consume('u')).resolves.toMatchObject({ remainingPoints: 1 });
  });
});
