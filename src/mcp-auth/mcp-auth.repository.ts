import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import type { WorkspaceRole } from '../workspaces/workspace.entities.js';
import { ConnectedAppEntity, McpAuthorizationStateEntity } from './mcp-auth.entities.js';

/** A stored artifact as the adapter reads it back. */
export interface StoredArtifact {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
}

/** A connected app with its workspace's name, for the list. */
export interface ConnectedAppRow extends ConnectedAppEntity {
  workspaceName: string | null;
}

/** A workspace the user may pick on the consent page. */
export interface MembershipRow {
  id: string;
  name: string;
  role: WorkspaceRole;
}

/** Rows the bounded sweep deletes at once. */
const SWEEP_BATCH = 500;

/** The SQL of the authorization server for MCP clients: its artifacts, the connected apps, the memberships it offers. */
@Injectable()
export class McpAuthRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async upsertArtifact(row: Omit<McpAuthorizationStateEntity, 'consumedAt'>): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO mcp_authorization_state (model, id, payload, grant_id, uid, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (model, id) DO UPDATE
         SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
      [row.model, row.id, JSON.stringify(row.payload), row.grantId, row.uid, row.expiresAt],
    );
  }

  /** A live (unexpired) artifact by its stored key, or by its uid (sessions, interactions). */
  async findArtifact(model: string, by: { id: string } | { uid: string }): Promise<StoredArtifact | undefined> {
    const [column, value] = 'id' in by ? ['id', by.id] : ['uid', by.uid];
    const rows: StoredArtifact[] = await this.dataSource.query(
      `SELECT payload, consumed_at AS "consumedAt" FROM mcp_authorization_state
       WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
      [model, value],
    );
    return rows[0];
  }

  async consumeArtifact(model: string, id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE mcp_authorization_state SET consumed_at = now() WHERE model = $1 AND id = $2 AND consumed_at IS NULL`,
      [model, id],
    );
  }

  async destroyArtifact(model: string, id: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM mcp_authorization_state WHERE model = $1 AND id = $2`, [model, id]);
  }

  async destroyArtifactsOfGrant(model: string, grantId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM mcp_authorization_state WHERE model = $1 AND grant_id = $2`, [
      model,
      grantId,
    ]);
  }

  /** Deletes up to SWEEP_BATCH expired artifacts; answers how many it deleted. */
  async sweepExpired(): Promise<number> {
    const deleted: unknown = await this.dataSource.query(
      `DELETE FROM mcp_authorization_state WHERE ctid IN (
         SELECT ctid FROM mcp_authorization_state WHERE expires_at < now() LIMIT ${SWEEP_BATCH})`,
    );
    // TypeORM answers a DELETE as [rows, affected count].
    return Array.isArray(deleted) && typeof deleted[1] === 'number' ? deleted[1] : 0;
  }

  async insertConnectedApp(app: Omit<ConnectedAppEntity, 'id' | 'createdAt' | 'lastUsedAt'>): Promise<void> {
    await this.dataSource.getRepository(ConnectedAppEntity).insert(app);
  }

  async listConnectedApps(userId: string): Promise<ConnectedAppRow[]> {
    return this.dataSource.query(
      `SELECT a.id, a.grant_id AS "grantId", a.user_id AS "userId", a.workspace_id AS "workspaceId",
              a.client_id AS "clientId", a.client_name AS "clientName", a.redirect_host AS "redirectHost",
              a.created_at AS "createdAt", a.last_used_at AS "lastUsedAt", w.name AS "workspaceName"
       FROM connected_apps a LEFT JOIN workspaces w ON w.id = a.workspace_id
       WHERE a.user_id = $1 ORDER BY a.created_at DESC, a.id`,
      [userId],
    );
  }

  async findConnectedApp(id: string, userId: string): Promise<ConnectedAppEntity | null> {
    return this.dataSource.getRepository(ConnectedAppEntity).findOneBy({ id, userId });
  }

  async findConnectedAppByGrant(grantId: string): Promise<ConnectedAppEntity | null> {
    return this.dataSource.getRepository(ConnectedAppEntity).findOneBy({ grantId });
  }

  async deleteConnectedApp(id: string): Promise<void> {
    await this.dataSource.getRepository(ConnectedAppEntity).delete({ id });
  }

  /** Records a use of the grant, at most once a minute (the UPDATE skips a recent one). */
  async touchConnectedApp(grantId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE connected_apps SET last_used_at = now()
       WHERE grant_id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [grantId],
    );
  }

  /** The Team workspaces the user is a member of, with their role. */
  async memberships(userId: string): Promise<MembershipRow[]> {
    return this.dataSource.query(
      `SELECT w.id, w.name, m.role FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
       WHERE m.user_id = $1 ORDER BY w.name, w.id`,
      [userId],
    );
  }
}
