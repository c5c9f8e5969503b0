import type { McpOAuthClientEntity } from '../mcp-oauth-client.entity.js';
import type { McpOAuthClientsRepository } from '../mcp-oauth-clients.repository.js';

type Used = 'find' | 'insertOrGet' | 'remove';

/** Registered MCP clients in memory, unique per (issuer, redirect URI) like the table. */
export class FakeMcpOAuthClientsRepository implements Pick<McpOAuthClientsRepository, Used> {
  readonly rows: McpOAuthClientEntity[] = [];

  async find(issuer: string, redirectUri: string): Promise<McpOAuthClientEntity | null> {
    return this.rows.find((r) => r.issuer === issuer && r.redirectUri === redirectUri) ?? null;
  }

  async insertOrGet(row: Omit<McpOAuthClientEntity, 'createdAt'>): Promise<McpOAuthClientEntity> {
    const existing = await this.find(row.issuer, row.redirectUri);
    if (existing !== null) {
      return existing;
    }
    const stored = { ...row, createdAt: new Date() };
    this.rows.push(stored);
    return stored;
  }

  async remove(id: string): Promise<void> {
    const at = this.rows.findIndex((r) => r.id === id);
    if (at >= 0) {
      this.rows.splice(at, 1);
    }
  }
}
