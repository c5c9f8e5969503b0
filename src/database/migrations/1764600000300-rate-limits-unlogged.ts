import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The rate-limit counters (API requests per address and per user, sign-in attempts, outgoing calls
 * per site domain) are written on nearly every request. In a logged table each of those writes waited
 * for PostgreSQL to flush its WAL to disk (with `npm start`'s durability, two flushes per
 * authenticated request). An unlogged table keeps the counters exact across every process that shares
 * the database and skips the WAL: after a crash of PostgreSQL (not a clean restart) the table starts
 * empty, so the windows then open afresh, and streaming replicas do not carry it (a failover does the
 * same). A counter that restarts from zero after a database crash is an acceptable price for the limits.
 */
export class RateLimitsUnlogged1764600000300 implements MigrationInterface {
  name = 'RateLimitsUnlogged1764600000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rate_limits SET UNLOGGED`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rate_limits SET LOGGED`);
  }
}
