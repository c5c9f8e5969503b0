/** The soak's measures (bench/soak.ts): each table's rows and bytes, runs by status, a process's RSS. */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

export interface TableSize {
  rows: number;
  /** pg_total_relation_size: the table, its indexes and its TOAST. */
  bytes: number;
}

/** Every table of the service's schema (the migrations' own list included). */
export async function tableSizes(db: pg.Pool): Promise<Map<string, TableSize>> {
  const { rows } = await db.query<{ name: string; bytes: string }>(
    "SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')",
  );
  const sizes = new Map<string, TableSize>();
  for (const row of rows) {
    const counted = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${row.name}"`);
    sizes.set(row.name, { rows: Number(counted.rows[0]!.n), bytes: Number(row.bytes) });
  }
  return sizes;
}

export interface Growth {
  table: string;
  rows: number;
  bytes: number;
}

/** Each table's growth from `start` to `end`, largest in bytes first. */
export function growth(start: Map<string, TableSize>, end: Map<string, TableSize>): Growth[] {
  return [...end.entries()]
    .map(([table, size]) => ({
      table,
      rows: size.rows - (start.get(table)?.rows ?? 0),
      bytes: size.bytes - (start.get(table)?.bytes ?? 0),
    }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** The runs among `ids` by status (an id with no row: `missing`). */
export async function runStatuses(db: pg.Pool, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM runs WHERE id = ANY($1::uuid[]) GROUP BY status',
    [ids],
  );
  const counts: Record<string, number> = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  counts.missing = ids.length - rows.reduce((sum, r) => sum + Number(r.n), 0);
  return counts;
}

/** Resident memory of a process, in MiB (Linux /proc). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
}
