import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Initial1763769600000 implements MigrationInterface {
  name = 'Initial1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL UNIQUE,
        name text,
        password_hash text NOT NULL,
        role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
        tier text NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'pro', 'harness', 'team')),
        credits bigint NOT NULL DEFAULT 0 CHECK (credits >= 0),
        subscription_status text NOT NULL DEFAULT 'active' CHECK (subscription_status IN ('active', 'past_due', 'canceled')),
        accepted_terms_at timestamptz,
        accepted_terms_version text,
        tokens_valid_after timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE revoked_tokens (
        jti uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX revoked_tokens_expires_at ON revoked_tokens (expires_at)`);
    // The shared store of rate-limiter-flexible (same layout it would create itself).
    await q.query(`
      CREATE TABLE rate_limits (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE rate_limits`);
    await q.query(`DROP TABLE revoked_tokens`);
    await q.query(`DROP TABLE users`);
  }
}
