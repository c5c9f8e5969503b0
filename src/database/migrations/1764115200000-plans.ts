import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Plans1764115200000 implements MigrationInterface {
  name = 'Plans1764115200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN payment_method jsonb`);
    await q.query(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        owner_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE workspace_members (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id)
      )`);
    await q.query(`CREATE UNIQUE INDEX workspace_one_owner ON workspace_members (workspace_id) WHERE role = 'owner'`);
    await q.query(`CREATE INDEX workspace_members_user ON workspace_members (user_id)`);
    for (const table of ['sites', 'agents', 'chat_sessions']) {
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces(id) ON DELETE CASCADE`,
      );
    }
    await q.query(
      `CREATE UNIQUE INDEX sites_workspace_url ON sites (workspace_id, url) WHERE workspace_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX sites_workspace_url`);
    for (const table of ['sites', 'agents', 'chat_sessions']) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_workspace`);
    }
    await q.query(`DROP TABLE workspace_members`);
    await q.query(`DROP TABLE workspaces`);
    await q.query(`ALTER TABLE users DROP COLUMN payment_method`);
  }
}
