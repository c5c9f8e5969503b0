import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type Reseal, type SealedColumns, sealedOf, type SealedRows, type StaleSealed } from '../vault/sealed-rows.js';
import { SiteEntity } from '../vault/site.entity.js';
import { WorkspaceMemberEntity } from '../workspaces/workspace.entities.js';
import { OAuthStateEntity } from './oauth-state.entity.js';

/** The SQL of the authorization flow: its pending states (the consume is one atomic UPDATE) and the reads it checks against. */
@Injectable()
export class OAuthRepository implements SealedRows {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insertState(state: Omit<OAuthStateEntity, 'createdAt'>): Promise<void> {
    await this.dataSource.getRepository(OAuthStateEntity).insert(state);
  }

  /** Atomic consume: only one request can ever use a state, and only before it expires. */
  async consumeState(stateHash: string): Promise<OAuthStateEntity | undefined> {
    const consumed: OAuthStateEntity[] = await this.dataSource
      .query(
        `UPDATE oauth_states SET used_at = now()
        WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING state_hash AS "stateHash", user_id AS "userId", site_id AS "siteId", key_id AS "keyId",
                  iv, ciphertext, auth_tag AS "authTag", scopes`,
        [stateHash],
      )
      .then(
        (result: [OAuthStateEntity[], number] | OAuthStateEntity[]) =>
          (Array.isArray(result[0]) ? result[0] : result) as OAuthStateEntity[],
      );
    return consumed[0];
  }

  /** Removes states that can no longer be used (a small indexed delete). */
  async purgeExpiredStates(): Promise<void> {
    await this.dataSource.query(`DELETE FROM oauth_states WHERE expires_at < now() - interval '1 day'`);
  }

  async findSite(id: string): Promise<SiteEntity | null> {
    return this.dataSource.getRepository(SiteEntity).findOneBy({ id });
  }

  async findMembership(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.dataSource.getRepository(WorkspaceMemberEntity).findOneBy({ workspaceId, userId });
  }

  /** The states sealed under another key than `keyId` (vault:rotate); a state's additional data binds its hash alone. */
  staleSealed(keyId: string): Promise<StaleSealed[]> {
    return this.dataSource.query('SELECT state_hash AS id, state_hash AS scope FROM oauth_states WHERE key_id <> $1', [
      keyId,
    ]);
  }

  /** Re-seals one state under its row lock, in a transaction of its own (vault:rotate). */
  reseal(stateHash: string, keyId: string, reseal: Reseal): Promise<boolean> {
    return this.dataSource.transaction(async (em) => {
      const rows: SealedColumns[] = await em.query(
        'SELECT key_id, iv, ciphertext, auth_tag FROM oauth_states WHERE state_hash = $1 AND key_id <> $2 FOR UPDATE',
        [stateHash, keyId],
      );
      const row = rows[0];
      if (row === undefined) {
        return false;
      }
      const sealed = reseal(sealedOf(row), { id: stateHash, scope: stateHash });
      await em.query(
        'UPDATE oauth_states SET key_id = $1, iv = $2, ciphertext = $3, auth_tag = $4 WHERE state_hash = $5',
        [sealed.keyId, sealed.iv, sealed.ciphertext, sealed.authTag, stateHash],
      );
      return true;
    });
  }
}
