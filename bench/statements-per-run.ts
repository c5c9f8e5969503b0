/**
 * Benchmark 11's counter: the statements the service (API and worker) sends its database, from
 * `pg_stat_statements` on the bench's own PostgreSQL (started with the module preloaded:
 * `statementTracking()`). The counter turns tracking off as it opens, which the bench does as soon as
 * its server is up; tracking is on only for a window (`start` to `read`), so the other benchmarks run
 * without it. (ALTER SYSTEM, not a server flag: a flag would override it.)
 *
 * Left out of a window's count: the bench's own statements on this connection; and, reported apart,
 * the statements the service sends by time rather than by run (BY_TIME).
 * The service's maintenance schedules (run reconciler, retention, purchases) are paused over a window
 * by the caller: they fire by time too.
 */
import type { Client } from '@temporalio/client';
import pg from 'pg';

/** The PostgreSQL flags the bench starts its server with when benchmark 11 runs. */
export function statementTracking(): string[] {
  return ['-c', 'shared_preload_libraries=pg_stat_statements'];
}

export interface StatementRow {
  query: string;
  calls: number;
}

export interface StatementCount {
  statements: number;
  writes: number;
  transactions: number;
  /** Statements sent by time (BY_TIME), left out of the others. */
  byTime: number;
  rows: StatementRow[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** The bench's own statements on the counter's connection. */
const OWN = /pg_stat_statements|pg_reload_conf|ALTER SYSTEM/i;
/**
 * What the service sends by time, not by run: the cache listeners' ping (every 5 s a process), the
 * rate limiters' process heartbeat (about a second a busy process) and their sweep of ended windows.
 */
const BY_TIME = [/^\s*SELECT \$1\s*$/i, /^WITH beat AS \(/i, /^DELETE FROM rate_limits WHERE key = ANY\(ARRAY\(/i];
const byTime = (query: string): boolean => BY_TIME.some((pattern) => pattern.test(query));
/** A statement that writes rows (a CTE's too). */
const WRITE = /\b(INSERT\s+INTO|UPDATE\s+"?\w+"?(\s+AS\s+\w+|\s+\w+)?\s+SET|DELETE\s+FROM)\b/i;

export class StatementCounter {
  private constructor(private readonly db: pg.Client) {}

  static async open(databaseUrl: string): Promise<StatementCounter> {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const counter = new StatementCounter(db);
    await counter.track('none');
    return counter;
  }

  private async track(mode: 'top' | 'none'): Promise<void> {
    await this.db.query(`ALTER SYSTEM SET pg_stat_statements.track = '${mode}'`);
    await this.db.query('SELECT pg_reload_conf()');
    // Every backend reads the new setting before its next statement; the signal takes a moment.
    await sleep(300);
  }

  /** Turns tracking on and forgets what was counted before. */
  async start(): Promise<void> {
    await this.track('top');
    await this.db.query('SELECT pg_stat_statements_reset()');
  }

  /** What the window counted in the service's database; tracking is off again afterwards. */
  async read(): Promise<StatementCount> {
    const { rows } = await this.db.query<{ query: string; calls: string }>(
      'SELECT query, calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())',
    );
    await this.track('none');
    const counted = rows
      .map((r) => ({ query: r.query.replace(/\s+/g, ' ').trim(), calls: Number(r.calls) }))
      .filter((r) => !OWN.test(r.query));
    const service = counted.filter((r) => !byTime(r.query)).sort((a, b) => b.calls - a.calls);
    const sum = (list: StatementRow[]): number => list.reduce((total, r) => total + r.calls, 0);
    return {
      statements: sum(service),
      writes: sum(service.filter((r) => WRITE.test(r.query))),
      transactions: sum(service.filter((r) => /^(BEGIN|START TRANSACTION)/i.test(r.query))),
      byTime: sum(counted.filter((r) => byTime(r.query))),
      rows: service,
    };
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}

/** Pauses the namespace's schedules but the agents' (and the bench's): resumes them when called back. */
export async function pauseMaintenance(client: Client): Promise<() => Promise<void>> {
  const paused: string[] = [];
  for await (const schedule of client.schedule.list()) {
    if (!schedule.scheduleId.startsWith('schedule-') && !schedule.scheduleId.startsWith('bench')) {
      if (!schedule.state.paused) {
        await client.schedule.getHandle(schedule.scheduleId).pause('benchmark 11 counts statements');
        paused.push(schedule.scheduleId);
      }
    }
  }
  return async () => {
    for (const id of paused) {
      await client.schedule.getHandle(id).unpause();
    }
  };
}
