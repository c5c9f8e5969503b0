import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { waitFor } from '../../scripts/runtime/processes.js';
import { Http } from '../utils/http.js';
import { Stack } from '../utils/stack.js';

// A limit no other suite uses: its counters' keys are `api-ip-<PER_ADDRESS>-<WINDOW>:<address>`.
const PER_ADDRESS = 977;
// One-second windows: a window ends while the test drives the next ones.
const WINDOW = 1;
const KEY_PREFIX = `api-ip-${PER_ADDRESS}-${WINDOW}:`;
/** Distinct client addresses per round, and rounds (each at least one window long). */
const PER_ROUND = 40;
const ROUNDS = 12;

let nextAddress = randomInt(1, 200) * 250;
/** A client address of its own (198.18.0.0/15, the benchmarking range), as the proxy reports it. */
function freshAddress(): string {
  nextAddress += 1;
  return `198.19.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;
}

describe('rate_limits rows expire (e2e)', () => {
  let stack: Stack;
  let db: pg.Client;

  beforeAll(async () => {
    stack = await Stack.start({
      worker: false,
      env: { TRUST_PROXY: '1', RATE_LIMIT_PER_IP: String(PER_ADDRESS), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW) },
    });
    db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  async function rowsOfThisLimit(): Promise<number> {
    const counted = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM rate_limits WHERE starts_with(key, $1)`,
      [KEY_PREFIX],
    );
    return counted.rows[0]!.n;
  }

  it('under a sustained load of distinct keys the table keeps about the last windows’ keys, and none once they end', async () => {
    const seen: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Each round lasts at least a window: PER_ROUND new addresses, each counted once.
      const pace = new Promise((resolve) => setTimeout(resolve, WINDOW * 1000));
      const answers = await Promise.all(
        Array.from({ length: PER_ROUND }, () =>
          new Http(stack.baseUrl).get('/api/me', { headers: { 'x-forwarded-for': freshAddress() } }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 401));
      await pace;
      seen.push(await rowsOfThisLimit());
    }
    // Every one of the ROUNDS × PER_ROUND keys was written (the counters count every request), but a
    // window's rows are deleted soon after it ends (a sweep every 0.5 to 1.5 s): at any time the table
    // holds the keys of the last few rounds, not of all of them.
    expect(seen.length).toBe(ROUNDS);
    expect(Math.max(...seen)).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeLessThanOrEqual(4 * PER_ROUND);
    // Once the load stops, every ended window's row goes.
    await waitFor('the ended windows’ rows deleted', async () => (await rowsOfThisLimit()) === 0, 20_000);
  }, 120_000);

  it('the sweep finds the ended rows by the index on expire', async () => {
    const index = await db.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'rate_limits' AND indexname = 'rate_limits_expire'`,
    );
    expect(index.rows).toEqual([{ indexdef: expect.stringContaining('(expire)') }]);
    // With the planner told to avoid a full scan where it can, the sweep's lookup is an index scan.
    await db.query('BEGIN');
    try {
      await db.query('SET LOCAL enable_seqscan = off');
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT key FROM rate_limits WHERE expire < $1 ORDER BY expire LIMIT 1000`,
        [Date.now()],
      );
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('rate_limits_expire');
    } finally {
      await db.query('ROLLBACK');
    }
  });
});
