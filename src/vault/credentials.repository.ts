import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type DeepPartial } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import { CredentialEntity } from './credential.entity.js';
import { type Reseal, type SealedColumns, sealedOf, type SealedRows, type StaleSealed } from './sealed-rows.js';

/**
 * The SQL of `site_credentials` rows as the vault stores them: TypeORM, with `ON CONFLICT DO NOTHING`
 * for a first insert and a row lock for a replacement. (The OAuth refresh's own atomic statements are
 * in credential-leases.repository.ts.)
 */
@Injectable()
export class CredentialsRepository implements SealedRows {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly caches: CacheInvalidationBus,
  ) {}

  /** A write's own process drops the site's cached pair at once (the trigger tells the others; VaultRepository). */
  private dropCached(siteId: string): void {
    this.caches.dropLocal('site', siteId);
  }

  private get repo() {
    return this.dataSource.getRepository(CredentialEntity);
  }

  findForSite(siteId: string): Promise<CredentialEntity | null> {
    return this.repo.findOneBy({ siteId });
  }

  /** A new row object (not yet stored). */
  create(fields: DeepPartial<CredentialEntity>): CredentialEntity {
    return this.repo.create(fields);
  }

  /** Inserts the row unless the site has a credential already (the unique site_id decides a race). */
  async insertIfAbsent(row: CredentialEntity): Promise<boolean> {
    const inserted = await this.repo
      .createQueryBuilder()
      .insert()
      .values(row)
      .orIgnore() // ON CONFLICT DO NOTHING: the unique site_id decides who wins a race
      .returning('id')
      .execute();
    this.dropCached(row.siteId);
    return (inserted.raw as unknown[]).length === 1;
  }

  /**
   * In one transaction: locks the site's row (null when it has none), lets `change` return the row to
   * store (or null to store nothing), and saves it.
   */
  async rewriteLocked(
    siteId: string,
    change: (row: CredentialEntity | null) => CredentialEntity | null,
  ): Promise<CredentialEntity | null> {
    const stored = await this.dataSource.transaction(async (em) => {
      const row = await em
        .getRepository(CredentialEntity)
        .createQueryBuilder('c')
        .setLock('pessimistic_write')
        .where('c.site_id = :siteId', { siteId })
        .getOne();
      const next = change(row);
      return next === null ? null : em.save(next);
    });
    this.dropCached(siteId);
    return stored;
  }

  async setRequiredScope(siteId: string, requiredScope: string | null): Promise<void> {
    await this.repo.update({ siteId }, { requiredScope });
    this.dropCached(siteId);
  }

  async delete(siteId: string): Promise<boolean> {
    const result = await this.repo.delete({ siteId });
    this.dropCached(siteId);
    return (result.affected ?? 0) > 0;
  }

  /** The credentials sealed under another key than `keyId` (vault:rotate), with their sites. */
  staleSealed(keyId: string): Promise<StaleSealed[]> {
    return this.dataSource.query('SELECT id, site_id AS scope FROM site_credentials WHERE key_id <> $1', [keyId]);
  }

  /** Re-seals one credential under its row lock, in a transaction of its own (vault:rotate). */
  reseal(id: string, keyId: string, reseal: Reseal): Promise<boolean> {
    return this.dataSource.transaction(async (em) => {
      const rows: Array<SealedColumns & { site_id: string }> = await em.query(
        'SELECT site_id, key_id, iv, ciphertext, auth_tag FROM site_credentials WHERE id = $1 AND key_id <> $2 FOR UPDATE',
        [id, keyId],
      );
      const row = rows[0];
      if (row === undefined) {
        return false;
      }
      const sealed = reseal(sealedOf(row), { id, scope: row.site_id });
      await em.query('UPDATE site_credentials SET key_id = $1, iv = $2, ciphertext = $3, auth_tag = $4 WHERE id = $5', [
        sealed.keyId,
        sealed.iv,
        sealed.ciphertext,
        sealed.authTag,
        id,
      ]);
      return true;
    });
  }
}
