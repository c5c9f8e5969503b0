import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * agentsite's authorization server for MCP clients (oidc-provider mounted at /mcp-oauth).
 * `mcp_authorization_state` holds every artifact of it (its adapter's one table): for codes, tokens
 * and sessions the key is the SHA-256 of the value, never the value. `connected_apps` lists the
 * grants users gave MCP clients (one row per grant), with the workspace chosen on the consent page;
 * revoking one deletes the row and the grant's artifacts.
 */
export class McpAuthorizationServer1765000019000 implements MigrationInterface {
  name = 'McpAuthorizationServer1765000019000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_authorization_state (
        model text NOT NULL,
        id text NOT NULL,
        payload jsonb NOT NULL,
        grant_id text,
        uid text,
        expires_at timestamptz(3),
        consumed_at timestamptz(3),
        PRIMARY KEY (model, id)
      )`);
    await q.query(
      `CREATE INDEX mcp_authorization_state_grant ON mcp_authorization_state (grant_id) WHERE grant_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX mcp_authorization_state_uid ON mcp_authorization_state (uid) WHERE uid IS NOT NULL`);
    await q.query(`CREATE INDEX mcp_authorization_state_expires ON mcp_authorization_state (expires_at)`);
    await q.query(`
      CREATE TABLE connected_apps (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        grant_id text NOT NULL UNIQUE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
        client_id text NOT NULL,
        client_name text NOT NULL,
        redirect_host text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        last_used_at timestamptz(3)
      )`);
    await q.query(`CREATE INDEX connected_apps_user ON connected_apps (user_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE connected_apps`);
    await q.query(`DROP TABLE mcp_authorization_state`);
  }
}
