import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Building the index on a large runs table can take longer than a query may (DB_QUERY_TIMEOUT_MS). */
const INDEX_BUILD_TIMEOUT_MS = 6 * 60 * 60 * 1000;
const INDEX = 'runs_unstarted';

/**
 * The runs a manual or scheduled start left queued (the repair of starts that never reached Temporal,
 * RunsRepository.findUnstarted, swept for every agent at once): an index of exactly those rows, in
 * queue order. Without it the planner walked `runs_unreconciled` in queue order, which also holds every
 * ended run not yet archived; since runs are archived at their queue's hand-over, that is every run
 * ended in the last few minutes. Its predicate is findUnstarted's, word for word. Built CONCURRENTLY (an
 * existing database keeps taking writes), hence no transaction; an interrupted build leaves an invalid
 * index, which is dropped and built again.
 */
export class RunsUnstarted1765000023000 implements MigrationInterface {
  name = 'RunsUnstarted1765000023000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
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
        "WHERE status = 'queued' AND delivery_id IS NULL AND triggered_by <> 'webhook'",
      query_timeout: INDEX_BUILD_TIMEOUT_MS,
    } as unknown as string);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${INDEX}`);
  }
}
