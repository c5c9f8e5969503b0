import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type DeepPartial } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import { CredentialEntity } from './credential.entity.js';

/**
 * The SQL of `site_credentials` rows as the vault stores them: TypeORM, with `ON CONFLICT DO NOTHING`
 * for a first insert and a row lock for a replacement. (The OAuth refresh's own atomic statements are
 * in credential-leases.repository.ts.)
 */
@Injectable()
export class CredentialsRepository {
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

  async delete(siteId: string): Promise<boolean> {
    const result = await this.repo.delete({ siteId });
    this.dropCached(siteId);
    return (result.affected ?? 0) > 0;
  }
}
