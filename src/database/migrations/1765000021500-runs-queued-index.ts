import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The rows still `queued`, by when they were queued: what the repair of starts that never reached
 * Temporal looks through (src/runs/unstarted-runs.ts), on every manual start of an agent and in the
 * periodic sweep. Partial: at any moment few runs are queued, however many the table holds.
 */
export class RunsQueuedIndex1765000021500 implements MigrationInterface {
  name = 'RunsQueuedIndex1765000021500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX runs_queued ON runs (queued_at) WHERE status = 'queued'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX runs_queued`);
  }
}
