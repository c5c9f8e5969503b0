import { type DataSource } from 'typeorm';
import { type ExpiredCounters } from './rate-limit-sweeper.js';
import { type CounterStore } from './reconciled-rate-limit.js';

/*
 * The SQL of the rate-limit counters (table rate_limits, shared by every limiter of every process:
 * infrastructure, not a feature's rows). RateLimitReconciler (reconciled-rate-limit.ts) decides
 * what to send; this store sends it in one statement per flush and one per heartbeat. The
 * ExpiredCounterSweeper (rate-limit-sweeper.ts) deletes the rows whose window ended.
 */

/** The heartbeats' rows: one per second, counting the processes that beat in it. */
const PROCESS_KEY_PREFIX = 'api-limit-processes';
/** Heartbeat rows outlive their second a little, then the sweeper deletes them. */
const PROCESS_ROW_TTL_MS = 10_000;

/**
 * The counters in the rate_limits table rate-limiter-flexible uses (same key, points and window
 * end, same reset of an ended window), so processes of an older release count in the same rows.
 */
export function postgresCounterStore(dataSource: DataSource, table: string): CounterStore {
  const pool = (dataSource.driver as unknown as { master: { query: PgQuery } }).master;
  return {
    async add(adds, now) {
      const result = await pool.query({
        name: 'agentsite-rate-limit-add',
        text: `
          INSERT INTO ${table} (key, points, expire)
            SELECT * FROM unnest($1::varchar[], $2::integer[], $3::bigint[])
          ON CONFLICT (key) DO UPDATE SET
            points = CASE WHEN ${table}.expire <= $4 THEN excluded.points ELSE ${table}.points + excluded.points END,
            expire = CASE WHEN ${table}.expire <= $4 THEN excluded.expire ELSE ${table}.expire END
          RETURNING key, points, expire`,
        values: [adds.map((a) => a.key), adds.map((a) => a.points), adds.map((a) => a.expire), now],
      });
      const counts = new Map<string, { points: number; expire: number }>();
      for (const row of result.rows as Array<{ key: string; points: number; expire: string | number | null }>) {
        counts.set(row.key, { points: row.points, expire: Number(row.expire ?? 0) });
      }
      return counts;
    },
    async heartbeat(now) {
      const second = Math.floor(now / 1000);
      // Each process beats about once a second: the busier of the last two whole seconds counts them
      // (a beat late by a little falls in the next second).
      const result = await pool.query({
        name: 'agentsite-rate-limit-heartbeat',
        text: `
          WITH beat AS (
            INSERT INTO ${table} (key, points, expire) VALUES ($1, 1, $2)
            ON CONFLICT (key) DO UPDATE SET points = ${table}.points + 1
          )
          SELECT coalesce(max(points), 0)::integer AS processes FROM ${table} WHERE key = ANY($3::varchar[])`,
        values: [
          `${PROCESS_KEY_PREFIX}:${second}`,
          now + PROCESS_ROW_TTL_MS,
          [`${PROCESS_KEY_PREFIX}:${second - 1}`, `${PROCESS_KEY_PREFIX}:${second - 2}`],
        ],
      });
      return (result.rows[0] as { processes: number } | undefined)?.processes ?? 0;
    },
  };
}

/**
 * Deletes up to `max` rows whose window ended (every limiter's keys and the heartbeats): the index
 * rate_limits_expire finds them, the LIMIT bounds the statement.
 */
export function postgresExpiredCounters(dataSource: DataSource, table: string): ExpiredCounters {
  const pool = (dataSource.driver as unknown as { master: { query: PgQuery } }).master;
  return {
    async deleteExpired(now, max) {
      const result = await pool.query({
        name: 'agentsite-rate-limit-expire',
        text: `
          DELETE FROM ${table} WHERE key = ANY(ARRAY(
            SELECT key FROM ${table} WHERE expire < $1 ORDER BY expire LIMIT $2
          ))`,
        values: [now, max],
      });
      return result.rowCount ?? 0;
    },
  };
}

type PgQuery = (q: {
  name: string;
  text: string;
  values: unknown[];
}) => Promise<{ rows: unknown[]; rowCount?: number | null }>;
