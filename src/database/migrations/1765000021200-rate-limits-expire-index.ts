import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Each API and worker process deletes the rate-limit counters whose window ended, a bounded batch at a
 * time (`expire < now`, see src/common/rate-limit-sweeper.ts): the index finds them without reading
 * the whole table, so the table stays about as large as the keys of its current windows.
 */
export class RateLimitsExpireIndex1765000021200 implements MigrationInterface {
  name = 'RateLimitsExpireIndex1765000021200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS rate_limits_expire ON rate_limits (expire)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rate_limits_expire`);
  }
}
