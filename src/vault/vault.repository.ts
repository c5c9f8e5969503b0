import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { RowMapper } from '../common/database/row-mapper.js';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { UserEntity } from '../users/user.entity.js';
import { type Scope, scopeSql, scopeWhere } from '../workspaces/scope.js';
import { CredentialEntity } from './credential.entity.js';
import { SiteEntity } from './site.entity.js';
import { lockUserRow } from '../users/user-lock.js';

/** What a new site needs (the rest keep their column defaults). */
export type NewSite = Pick<SiteEntity, 'userId' | 'workspaceId' | 'url' | 'manifest' | 'manifestFetchedAt'>;

/**
 * The SQL of vault sites (`sites`, with their credentials where a read needs them): TypeORM for the
 * ordinary reads and writes, raw SQL through the row mapper for a tool call's site-and-credential read.
 */
@Injectable()
export class VaultRepository {
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly credentialRows: RowMapper<CredentialEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.credentialRows = new RowMapper(dataSource, CredentialEntity, 'c');
  }

  private get sites() {
    return this.dataSource.getRepository(SiteEntity);
  }

  findInScope(scope: Scope, siteId: string): Promise<SiteEntity | null> {
    return this.sites.findOneBy({ id: siteId, ...scopeWhere(scope) });
  }

  /**
   * A site of the scope with its credential (null when it has none), in one round trip; null when the
   * scope has no such site. `siteId` must be a UUID (the caller checks).
   */
  async findWithCredential(
    scope: Scope,
    siteId: string,
  ): Promise<{ site: SiteEntity; credential: CredentialEntity | null } | null> {
    const [where, params] = scopeSql(scope, 's');
    // The scope's condition as the query builders use it, its named parameters made positional.
    const [sql, values] = this.dataSource.driver.escapeQueryWithParameters(
      `SELECT ${this.siteRows.select()}, ${this.credentialRows.select()} FROM sites s ` +
        `LEFT JOIN site_credentials c ON c.site_id = s.id WHERE s.id = :siteId AND ${where}`,
      { ...params, siteId },
    );
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(sql, values);
    const site = rows[0] === undefined ? null : this.siteRows.from(rows[0]);
    return site === null ? null : { site, credential: this.credentialRows.from(rows[0]!) };
  }

  existsInWorkspace(workspaceId: string, url: string): Promise<boolean> {
    return this.sites.exists({ where: { workspaceId, url } });
  }

  async save(site: SiteEntity): Promise<void> {
    await this.sites.save(site);
  }

  async delete(siteId: string): Promise<void> {
    await this.sites.delete({ id: siteId });
  }

  /**
   * Adds the site in one transaction, serialised per limits owner (a row lock on that user) so that a
   * limit holds under concurrent requests. `check` sees the owner, whether the scope has the URL
   * already and how many sites it has, and throws to refuse.
   */
  add(
    scope: Scope,
    limitsUserId: string,
    site: NewSite,
    check: (owner: UserEntity, taken: boolean, count: number) => void,
  ): Promise<SiteEntity> {
    return this.dataSource.transaction(async (em) => {
      const owner = await lockUserRow(em, limitsUserId);
      const sites = em.getRepository(SiteEntity);
      const taken = await sites.exists({ where: { ...scopeWhere(scope), url: site.url } });
      check(owner, taken, taken ? 0 : await sites.countBy(scopeWhere(scope)));
      return sites.save(sites.create(site));
    });
  }

  /** One page of the scope's sites in creation order (one row more than asked), with their credentials. */
  async page(scope: Scope, query: PageQuery): Promise<{ rows: SiteEntity[]; credentials: CredentialEntity[] }> {
    const [where, params] = scopeSql(scope, 's');
    const qb = this.sites
      .createQueryBuilder('s')
      .where(where, params)
      .orderBy('s.created_at', 'ASC')
      .addOrderBy('s.id', 'ASC');
    keysetWhere(qb, 's', query.cursor);
    const rows = await qb.take(query.limit + 1).getMany();
    const credentials = rows.length
      ? await this.dataSource
          .getRepository(CredentialEntity)
          .createQueryBuilder('c')
          .where('c.site_id IN (:...ids)', { ids: rows.map((r) => r.id) })
          .getMany()
      : [];
    return { rows, credentials };
  }
}
