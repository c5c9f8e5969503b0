import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, IsNull } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import { type LocalCache } from '../common/cache/local-cache.js';
import { RowMapper } from '../common/database/row-mapper.js';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { UserEntity } from '../users/user.entity.js';
import { inScope, type Scope, scopeSql, scopeWhere } from '../workspaces/scope.js';
import { CredentialEntity } from './credential.entity.js';
import { SiteEntity } from './site.entity.js';
import { lockUserRow } from '../users/user-lock.js';

/** Sites (with their credentials) the process keeps at most; a pair is a few KB (the manifest). */
const CACHED_SITES = 5_000;
/**
 * Vaults whose site lists the process keeps at most, and the longest list it keeps (a longer one is
 * read every time): at most 5,000 sites, as many as the pairs above (a list shares no rows with them).
 */
const CACHED_SITE_LISTS = 250;
const CACHED_LIST_MAX_SITES = 20;

/** The key of a vault's site list (`sites:<key>` notifications): `u:<user id>`, or `w:<workspace id>`. */
function listKey(owner: { userId: string; workspaceId: string | null }): string {
  return owner.workspaceId === null ? `u:${owner.userId}` : `w:${owner.workspaceId}`;
}

function scopeListKey(scope: Scope): string {
  return listKey({ userId: scope.user.id, workspaceId: scope.workspace?.id ?? null });
}

interface SiteList {
  limit: number;
  sites: readonly SiteEntity[];
}

interface SiteWithCredential {
  site: SiteEntity;
  credential: CredentialEntity | null;
}

/** What a new site needs (the rest keep their column defaults). */
export type NewSite = Pick<SiteEntity, 'userId' | 'workspaceId' | 'url' | 'manifest' | 'manifestFetchedAt'> &
  Partial<Pick<SiteEntity, 'protocol' | 'mcp'>>;

/**
 * The SQL of vault sites (`sites`, with their credentials where a read needs them): TypeORM for the
 * ordinary reads and writes, raw SQL through the row mapper (and a cache) for a tool call's
 * site-and-credential read.
 */
@Injectable()
export class VaultRepository {
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly credentialRows: RowMapper<CredentialEntity>;

  private readonly withCredentialQuery: string;
  private readonly siteColumns: string;
  private cache: LocalCache<SiteWithCredential> | undefined;
  private listCache: LocalCache<SiteList> | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly caches: CacheInvalidationBus,
  ) {
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.credentialRows = new RowMapper(dataSource, CredentialEntity, 'c');
    this.siteColumns = this.siteRows.select();
    this.withCredentialQuery =
      `SELECT ${this.siteColumns}, ${this.credentialRows.select()} FROM sites s ` +
      'LEFT JOIN site_credentials c ON c.site_id = s.id WHERE s.id = $1';
  }

  /** Made on first use: a process that never reads a site this way (the worker) keeps no cache and no listener. */
  private get cached(): LocalCache<SiteWithCredential> {
    this.cache ??= this.caches.cache('site', CACHED_SITES);
    return this.cache;
  }

  /** The vaults' site lists, made on first use as `cached` is (`sites:<key>` notifications drop them). */
  private get cachedLists(): LocalCache<SiteList> {
    this.listCache ??= this.caches.cache('sites', CACHED_SITE_LISTS);
    return this.listCache;
  }

  /** This process's copies of the site and of its vault's list, dropped now (its next read sees the write). */
  private dropLocal(site: Pick<SiteEntity, 'id' | 'userId' | 'workspaceId'>): void {
    this.caches.dropLocal('site', site.id);
    this.caches.dropLocal('sites', listKey(site));
  }

  private get sites() {
    return this.dataSource.getRepository(SiteEntity);
  }

  findInScope(scope: Scope, siteId: string): Promise<SiteEntity | null> {
    return this.sites.findOneBy({ id: siteId, ...scopeWhere(scope) });
  }

  findByUrl(scope: Scope, url: string): Promise<SiteEntity | null> {
    return this.sites.findOneBy({ url, ...scopeWhere(scope) });
  }

  /**
   * A site of the scope with its credential (null when it has none); null when the scope has no such
   * site. `siteId` must be a UUID (the caller checks). Every direct tool call reads this: the row pair
   * is cached in the process by site id (one query on a miss) and dropped by the `site:<id>`
   * notifications of the tables' triggers; the scope is checked on every call. Callers must not
   * change the returned rows (they are shared).
   */
  async findWithCredential(
    scope: Scope,
    siteId: string,
  ): Promise<{ site: SiteEntity; credential: CredentialEntity | null } | null> {
    let found = this.cached.get(siteId);
    if (found === undefined) {
      // Taken before the query: a notification that arrives while it runs keeps its answer out of the cache.
      const ticket = this.cached.ticket();
      const rows: Array<Record<string, unknown>> = await this.dataSource.query(this.withCredentialQuery, [siteId]);
      const site = rows[0] === undefined ? null : this.siteRows.from(rows[0]);
      if (site === null) {
        return null;
      }
      found = { site, credential: this.credentialRows.from(rows[0]!) };
      this.cached.set(siteId, found, ticket);
    }
    return inScope(scope, found.site) ? found : null;
  }

  /** A site by id, whoever's it is (the relisting after a credential was stored). */
  findById(siteId: string): Promise<SiteEntity | null> {
    return this.sites.findOneBy({ id: siteId });
  }

  async save(site: SiteEntity): Promise<void> {
    await this.sites.save(site);
    // The table's triggers tell every process; this one drops its copies now (its next read sees the change).
    this.dropLocal(site);
  }

  async delete(site: Pick<SiteEntity, 'id' | 'userId' | 'workspaceId'>): Promise<void> {
    await this.sites.delete({ id: site.id });
    this.dropLocal(site);
  }

  /**
   * Adds the site in one transaction, serialised per limits owner (a row lock on that user) so that a
   * limit holds under concurrent requests. `check` sees the owner, whether the scope has the URL
   * already and how many sites it has, and throws to refuse.
   */
  async add(
    scope: Scope,
    limitsUserId: string,
    site: NewSite,
    check: (owner: UserEntity, taken: boolean, count: number) => void,
  ): Promise<SiteEntity> {
    const added = await this.dataSource.transaction(async (em) => {
      const owner = await lockUserRow(em, limitsUserId);
      const sites = em.getRepository(SiteEntity);
      const taken = await sites.exists({ where: { ...scopeWhere(scope), url: site.url } });
      check(owner, taken, taken ? 0 : await sites.countBy(scopeWhere(scope)));
      return sites.save(sites.create(site));
    });
    this.caches.dropLocal('sites', listKey(site));
    return added;
  }

  /**
   * Moves a personal site into the scope's workspace in one transaction, serialised per limits owner
   * as `add` is, so sharing cannot pass the workspace's vault limit either. `check` sees the owner,
   * whether the workspace has the URL already and how many sites it has, and throws to refuse.
   */
  async moveToWorkspace(
    workspaceId: string,
    limitsUserId: string,
    site: SiteEntity,
    check: (owner: UserEntity, taken: boolean, count: number) => void,
  ): Promise<boolean> {
    const moved = await this.dataSource.transaction(async (em) => {
      const owner = await lockUserRow(em, limitsUserId);
      const sites = em.getRepository(SiteEntity);
      const taken = await sites.exists({ where: { workspaceId, url: site.url } });
      check(owner, taken, taken ? 0 : await sites.countBy({ workspaceId }));
      // Still personal: a concurrent move of the same site moves it once.
      const result = await sites.update({ id: site.id, workspaceId: IsNull() }, { workspaceId });
      return (result.affected ?? 0) === 1;
    });
    this.dropLocal(site);
    if (moved) {
      this.caches.dropLocal('sites', listKey({ userId: site.userId, workspaceId }));
      site.workspaceId = workspaceId;
    }
    return moved;
  }

  /**
   * The scope's first `limit` sites in creation order, without their credentials: what every MCP
   * tools/list and tools/call reads to name the vault's tools. Cached in the process per vault (one raw
   * query through the row mapper on a miss) and dropped by the `sites:<key>` notifications of the
   * table's trigger, so a list is never older than the last site added, changed or removed. Callers
   * must not change the returned rows (they are shared).
   */
  async firstSites(scope: Scope, limit: number): Promise<readonly SiteEntity[]> {
    const key = scopeListKey(scope);
    const cached = this.cachedLists.get(key);
    if (cached !== undefined && cached.limit === limit) {
      return cached.sites;
    }
    // Taken before the query: a notification that arrives while it runs keeps its answer out of the cache.
    const ticket = this.cachedLists.ticket();
    const sites = await this.readFirstSites(scope, limit);
    if (sites.length <= CACHED_LIST_MAX_SITES) {
      this.cachedLists.set(key, { limit, sites }, ticket);
    }
    return sites;
  }

  private async readFirstSites(scope: Scope, limit: number): Promise<SiteEntity[]> {
    const [where, params] =
      scope.workspace !== null
        ? ['s.workspace_id = $1', [scope.workspace.id]]
        : ['s.user_id = $1 AND s.workspace_id IS NULL', [scope.user.id]];
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${this.siteColumns} FROM sites s WHERE ${where} ORDER BY s.created_at ASC, s.id ASC LIMIT $2`,
      [...params, limit],
    );
    return rows.map((row) => this.siteRows.from(row)!);
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
