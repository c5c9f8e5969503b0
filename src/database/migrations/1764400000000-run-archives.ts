import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The archived timeline of an ended run. A run's timeline is its Temporal workflow history, which
 * the namespace deletes after its retention; the run's workflow writes its timeline here as its last
 * step, so the run reads the same for as long as its row exists. Deleted with the run (cascade).
 * `json`, not `jsonb`: the timeline is stored and served whole, never queried inside, and a site's
 * tool result or a model's text may hold a \u0000 that jsonb refuses (the run could never close).
 */
export class RunArchives1764400000000 implements MigrationInterface {
  name = 'RunArchives1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE run_archives (
        run_id uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        temporal_run_id text NOT NULL,
        timeline json NOT NULL,
        archived_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    // The retention clean-up looks for ended runs by age.
    await q.query(`CREATE INDEX runs_created ON runs (created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX runs_created`);
    await q.query(`DROP TABLE run_archives`);
  }
}
