import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * MCP servers as sites. `sites.protocol` says how the service speaks to a site (`agentsite`: its
 * manifest and HTTPS tool endpoints; `mcp`: the Model Context Protocol at the URL); `sites.mcp` keeps
 * what an MCP server told us that a manifest has no place for (the endpoint, the revision it spoke,
 * its authorization server and the RFC 8707 resource). `site_credentials.required_scope` is the
 * scope a server asked for in a 403 `insufficient_scope` (step-up): the next OAuth start asks for it.
 * `mcp_oauth_clients` keeps the client the service registered at an authorization server (dynamic
 * registration, RFC 7591), one per issuer and redirect URI, reused by every user; a secret, when the
 * server issued one, sealed like credentials.
 */
export class McpSites1765000017700 implements MigrationInterface {
  name = 'McpSites1765000017700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE sites ADD COLUMN protocol text NOT NULL DEFAULT 'agentsite' CHECK (protocol IN ('agentsite', 'mcp'))`,
    );
    await q.query(`ALTER TABLE sites ADD COLUMN mcp jsonb`);
    await q.query(`ALTER TABLE site_credentials ADD COLUMN required_scope text`);
    await q.query(`
      CREATE TABLE mcp_oauth_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        issuer text NOT NULL,
        redirect_uri text NOT NULL,
        client_id text NOT NULL,
        key_id text,
        iv bytea,
        ciphertext bytea,
        auth_tag bytea,
        token_endpoint_auth_method text NOT NULL DEFAULT 'none',
        registration jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (issuer, redirect_uri)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mcp_oauth_clients`);
    await q.query(`ALTER TABLE site_credentials DROP COLUMN required_scope`);
    await q.query(`ALTER TABLE sites DROP COLUMN mcp`);
    await q.query(`ALTER TABLE sites DROP COLUMN protocol`);
  }
}
