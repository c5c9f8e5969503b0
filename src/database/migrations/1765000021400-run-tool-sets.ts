import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Building the index on a large runs table can take longer than a query may (DB_QUERY_TIMEOUT_MS). */
const INDEX_BUILD_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/**
 * Tool definitions out of workflow payloads: `run_tool_sets` keeps each distinct tool set (a run's
 * system prompt and tools, as canonical JSON) once, named by its sha256; a run's row names its set
 * (`runs.tool_set_hash`), and its workflow carries only the hash. The index finds the sets no run
 * names any more (the retention clean-up deletes them); built CONCURRENTLY, so an existing database
 * keeps taking writes while it builds, hence `transaction = false` (each statement commits alone).
 */
export class RunToolSets1765000021400 implements MigrationInterface {
  name = 'RunToolSets1765000021400';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS run_tool_sets (
        hash text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
        content text NOT NULL,
        used_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`ALTER TABLE runs ADD COLUMN IF NOT EXISTS tool_set_hash text`);
    const invalid: unknown[] = await q.query(
      'SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid',
      ['runs_tool_set_hash'],
    );
    if (invalid.length > 0) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS runs_tool_set_hash`);
    }
    await q.query({
      text: `CREATE INDEX CONCURRENTLY IF NOT EXISTS runs_tool_set_hash ON runs (tool_set_hash) WHERE tool_set_hash IS NOT NULL`,
      query_timeout: INDEX_BUILD_TIMEOUT_MS,
    } as unknown as string);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS runs_tool_set_hash`);
    await q.query(`ALTER TABLE runs DROP COLUMN IF EXISTS tool_set_hash`);
    await q.query(`DROP TABLE IF EXISTS run_tool_sets`);
  }
}
