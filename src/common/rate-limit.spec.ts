import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { AppError } from './app-error.js';
import { consumeOrThrow, postgresLimiter } from './rate-limit.js';

/** A data source whose pool answers every query with `answer` (as TypeORM's postgres driver exposes it). */
function dataSourceAnswering(answer: (text: string) => Promise<{ rows: unknown[] }>): DataSource {
  return { driver: { master: { query: (q: { text: string }) => answer(q.text) } } } as unknown as DataSource;
}

describe('postgresLimiter', () => {
  it('counts in the shared store: once its points are spent, RATE_LIMITED with the wait', async () => {
    // The store's answer after the upsert: this key has 3 points consumed in a window ending in 20 s.
    const limiter = postgresLimiter(
      dataSourceAnswering(async () => ({ rows: [{ points: 3, expire: Date.now() + 20_000 }] })),
      'spec',
      2,
      60,
    );
    const refused = await consumeOrThrow(limiter, 'k', 'RATE_LIMITED', 'too many').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED' });
    expect((refused as AppError).retryAfterSeconds).toBeGreaterThanOrEqual(19);
  });

  it('never falls back to a per-process counter: when the store fails, every consume fails', async () => {
    // A per-process fallback would let each process allow the whole limit from zero: with N processes,
    // N times the limit. The store is unreachable here, so nothing may pass.
    const limiter = postgresLimiter(
      dataSourceAnswering(() => Promise.reject(new Error('timeout exceeded when trying to connect'))),
      'spec',
      5,
      60,
    );
    for (let i = 0; i < 3; i += 1) {
      await expect(consumeOrThrow(limiter, 'k', 'OUTGOING_RATE_LIMITED', 'too many')).rejects.toThrow(
        'timeout exceeded when trying to connect',
      );
    }
  });
});
