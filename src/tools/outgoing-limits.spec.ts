import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { AppError } from '../common/app-error.js';
import type { Settings } from '../config/settings.js';
import type { MetricsService } from '../metrics/metrics.service.js';
import { OutgoingLimits } from './outgoing-limits.js';

/**
 * A PostgreSQL pool that answers the counters' statements from a map (one process counting) and
 * records every statement: what a tool call costs the database.
 */
function fakeDatabase() {
  const counts = new Map<string, number>();
  const statements: string[] = [];
  const query = async (q: { name?: string; text: string; values: unknown[] }) => {
    statements.push(q.name ?? q.text);
    if (q.name === 'agentsite-rate-limit-heartbeat') {
      return { rows: [{ processes: 1 }] };
    }
    if (q.name === 'agentsite-rate-limit-add') {
      const [keys, points, expires] = q.values as [string[], number[], number[]];
      return {
        rows: keys.map((key, i) => {
          counts.set(key, (counts.get(key) ?? 0) + points[i]!);
          return { key, points: counts.get(key), expire: expires[i] };
        }),
      };
    }
    // rate-limiter-flexible's own upsert, or the sweeper's delete.
    return { rows: [{ points: 1, expire: null }], rowCount: 0 };
  };
  const dataSource = { driver: { master: { query } } } as unknown as DataSource;
  return { dataSource, counts, statements };
}

const metrics = {
  outgoingLimited: { inc: () => undefined },
  domainLabel: (domain: string) => domain,
} as unknown as MetricsService;

const site = { userId: 'u1', workspaceId: null };

function limits(dataSource: DataSource, perMinute: number, perUser = perMinute): OutgoingLimits {
  const settings = { outgoingCallsPerMinute: perMinute, outgoingCallsPerMinutePerUser: perUser } as Settings;
  return new OutgoingLimits(dataSource, settings, metrics);
}

const adds = (statements: string[]): number => statements.filter((s) => s === 'agentsite-rate-limit-add').length;

describe('OutgoingLimits (counted as the API limits are)', () => {
  it('a budget of 40 or more: calls take their slots without a statement each, and every slot is counted', async () => {
    const { dataSource, counts, statements } = fakeDatabase();
    const outgoing = limits(dataSource, 1000);
    // The first call waits for the store (the process count is not known yet).
    await outgoing.take(site, 'notes.example');
    await new Promise((resolve) => setImmediate(resolve));
    const before = adds(statements);
    for (let i = 0; i < 20; i += 1) {
      await outgoing.take(site, 'notes.example');
    }
    expect(adds(statements)).toBe(before);
    expect(statements.filter((s) => !s.startsWith('agentsite-rate-limit-'))).toEqual([]);
    // Shutdown sends what is pending: all 21 slots reach the shared counter.
    await outgoing.onApplicationShutdown();
    expect(counts.get('outgoing-1000-60:notes.example')).toBe(21);
  });

  it('a small budget (the default 10) stays exact: the call past it is refused with the retry delay', async () => {
    const { dataSource } = fakeDatabase();
    const outgoing = limits(dataSource, 3);
    for (let i = 0; i < 3; i += 1) {
      await outgoing.take(site, 'notes.example');
    }
    const refused = await outgoing.take(site, 'notes.example').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'OUTGOING_RATE_LIMITED', retryAfterSeconds: 60 });
    await outgoing.onApplicationShutdown();
  });
});
