import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Vault1763856000000 implements MigrationInterface {
  name = 'Vault1763856000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sites (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid,
        url text NOT NULL,
        manifest jsonb NOT NULL,
        manifest_fetched_at timestamptz(3) NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX sites_user_url ON sites (user_id, url) WHERE workspace_id IS NULL`);
    await q.query(`CREATE INDEX sites_user_created ON sites (user_id, created_at, id)`);
    await q.query(`
      CREATE TABLE site_credentials (
        id uuid PRIMARY KEY,
        site_id uuid NOT NULL UNIQUE REFERENCES sites(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('bearer', 'oauth2')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'reauth_required')),
        key_id text NOT NULL,
        iv bytea NOT NULL,
        ciphertext bytea NOT NULL,
        auth_tag bytea NOT NULL,
        token_hint text NOT NULL,
        expires_at timestamptz(3),
        scopes jsonb,
        generation integer NOT NULL DEFAULT 1,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE oauth_states (
        state_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        site_id uuid NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
        key_id text NOT NULL,
        iv bytea NOT NULL,
        ciphertext bytea NOT NULL,
        auth_tag bytea NOT NULL,
        scopes jsonb NOT NULL,
        expires_at timestamptz(3) NOT NULL,
        used_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_states_expires ON oauth_states (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_states`);
    await q.query(`DROP TABLE site_credentials`);
    await q.query(`DROP TABLE sites`);
  }
}
