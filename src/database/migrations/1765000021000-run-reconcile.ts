import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Building the index on a large table can take longer than a query may (DB_QUERY_TIMEOUT_MS). */
const INDEX_BUILD_TIMEOUT_MS = 6 * 60 * 60 * 1000;
const INDEX = 'runs_unreconciled';

/**
 * `runs.archived_at`: when the run's timeline was archived (run_archives), null until then. The run
 * reconciler (RunReconcileService) reads the runs that may still need it through a partial index of
 * only those rows: runs not ended (their execution may have been terminated) and started runs that
 * ended without an archive. A run leaves the index once archived (or, never started, once ended), so
 * a batch reads a few rows whatever the size of `runs`. Runs archived before this migration take the
 * time of their archive. Built CONCURRENTLY (an existing database keeps taking writes), hence no
 * transaction; an interrupted build leaves an invalid index, which is dropped and built again.
 */
export class RunReconcile1765000021000 implements MigrationInterface {
  name = 'RunReconcile1765000021000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE runs ADD COLUMN IF NOT EXISTS archived_at timestamptz(3)');
    await q.query({
      text:
        'UPDATE runs r SET archived_at = a.archived_at FROM run_archives a ' +
        'WHERE a.run_id = r.id AND r.archived_at IS NULL',
      query_timeout: INDEX_BUILD_TIMEOUT_MS,
    } as unknown as string);
    const invalid: unknown[] = await q.query(
      'SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid',
      [INDEX],
    );
    if (invalid.length > 0) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${INDEX}`);
    }
    await q.query({
      text:
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${INDEX} ON runs (queued_at, id) ` +
        "WHERE archived_at IS NULL AND (status IN ('queued', 'active') OR temporal_run_id IS NOT NULL)",
      query_timeout: INDEX_BUILD_TIMEOUT_MS,
    } as unknown as string);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${INDEX}`);
    await q.query('ALTER TABLE runs DROP COLUMN IF EXISTS archived_at');
  }
}
