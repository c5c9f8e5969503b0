import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { type Reseal, type SealedColumns, sealedOf, type SealedRows, type StaleSealed } from '../vault/sealed-rows.js';
import { McpOAuthClientEntity } from './mcp-oauth-client.entity.js';

/** The SQL of `mcp_oauth_clients`: the clients registered at MCP servers' authorization servers. */
@Injectable()
export class McpOAuthClientsRepository implements SealedRows {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(issuer: string, redirectUri: string): Promise<McpOAuthClientEntity | null> {
    return this.dataSource.getRepository(McpOAuthClientEntity).findOneBy({ issuer, redirectUri });
  }

  /**
   * Keeps the first registration for (issuer, redirect URI): two users registering at the same moment
   * both get the row that won, and the other registration is left unused at the server.
   */
  async insertOrGet(row: Omit<McpOAuthClientEntity, 'createdAt'>): Promise<McpOAuthClientEntity> {
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(McpOAuthClientEntity)
      .values(row as QueryDeepPartialEntity<McpOAuthClientEntity>)
      .orIgnore()
      .execute();
    const stored = await this.find(row.issuer, row.redirectUri);
    if (stored === null) {
      throw new Error(`mcp_oauth_clients: the registration for ${row.issuer} vanished`);
    }
    return stored;
  }

  /** Forgets a registration the authorization server no longer knows (invalid_client), so the next start registers again. */
  async remove(id: string): Promise<void> {
    await this.dataSource.getRepository(McpOAuthClientEntity).delete({ id });
  }

  /** The secrets sealed under another key than `keyId` (vault:rotate); their additional data binds the id alone. */
  staleSealed(keyId: string): Promise<StaleSealed[]> {
    return this.dataSource.query(
      'SELECT id::text AS id, id::text AS scope FROM mcp_oauth_clients WHERE key_id IS NOT NULL AND key_id <> $1',
      [keyId],
    );
  }

  /** Re-seals one secret under its row lock, in a transaction of its own (vault:rotate). */
  reseal(id: string, keyId: string, reseal: Reseal): Promise<boolean> {
    return this.dataSource.transaction(async (em) => {
      const rows: SealedColumns[] = await em.query(
        `SELECT key_id, iv, ciphertext, auth_tag FROM mcp_oauth_clients
          WHERE id = $1 AND key_id IS NOT NULL AND key_id <> $2 FOR UPDATE`,
        [id, keyId],
      );
      const row = rows[0];
      if (row === undefined) {
        return false;
      }
      const sealed = reseal(sealedOf(row), { id, scope: id });
      await em.query(
        'UPDATE mcp_oauth_clients SET key_id = $1, iv = $2, ciphertext = $3, auth_tag = $4 WHERE id = $5',
        [sealed.keyId, sealed.iv, sealed.ciphertext, sealed.authTag, id],
      );
      return true;
    });
  }
}
