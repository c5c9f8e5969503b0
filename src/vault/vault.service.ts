import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { requireBelow } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { type Page, type PageQuery, keysetWhere, pageOf } from '../common/pagination.js';
import { ManifestFetcher, normaliseSiteUrl } from '../sites/manifest-fetcher.js';
import { deriveScope, type SiteScope } from '../sites/scopes.js';
import { SiteHttpClient } from '../sites/site-http.js';
import { UserEntity } from '../users/user.entity.js';
import { limitsUser, requireRole, requireWorkspace, type Scope, scopeSql, scopeWhere } from '../workspaces/scope.js';
import { CredentialEntity, type CredentialKind } from './credential.entity.js';
import { CredentialsService } from './credentials.service.js';
import { SiteEntity } from './site.entity.js';
import { UUID } from '../common/ids.js';
import { RowMapper } from '../common/database/row-mapper.js';

export interface SiteResponse {
  id: string;
  url: string;
  name: string;
  version: string;
  description: string;
  serverUrl: string;
  auth: { type: 'bearer' | 'oauth2'; scopes?: string[] };
  tools: Array<{ name: string; description: string; inputSchema: unknown; scope: SiteScope }>;
  credential: {
    kind: CredentialKind | null;
    status?: CredentialEntity['status'];
    tokenHint?: string;
    expiresAt?: string | null;
    scopes?: SiteScope[] | null;
  };
  manifestFetchedAt: string;
  createdAt: string;
}

export interface TokenAnswer {
  tokenHint: string;
  expiresAt: string | null;
}

export function toSiteResponse(site: SiteEntity, credential: CredentialEntity | null): SiteResponse {
  const { manifest } = site;
  return {
    id: site.id,
    url: site.url,
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    serverUrl: manifest.server.url,
    auth: manifest.auth.type === 'oauth2' ? { type: 'oauth2', scopes: manifest.auth.scopes } : { type: 'bearer' },
    tools: manifest.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema,
      scope: deriveScope(tool),
    })),
    credential:
      credential === null
        ? { kind: null }
        : {
            kind: credential.kind,
            status: credential.status,
            tokenHint: credential.tokenHint,
            expiresAt: credential.expiresAt?.toISOString() ?? null,
            ...(credential.kind === 'oauth2' ? { scopes: credential.scopes } : {}),
          },
    manifestFetchedAt: site.manifestFetchedAt.toISOString(),
    createdAt: site.createdAt.toISOString(),
  };
}

/** A user's vault: sites with their manifests, and the credentials for them. */
@Injectable()
export class VaultService {
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly credentialRows: RowMapper<CredentialEntity>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly http: SiteHttpClient,
    private readonly manifests: ManifestFetcher,
    private readonly credentials: CredentialsService,
  ) {
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.credentialRows = new RowMapper(dataSource, CredentialEntity, 'c');
  }

  private get sites() {
    return this.dataSource.getRepository(SiteEntity);
  }

  /** A site of the scope, or NOT_FOUND (also for another user's or workspace's: its existence is not revealed). */
  async findInScope(scope: Scope, siteId: string): Promise<SiteEntity> {
    const site = UUID.test(siteId) ? await this.sites.findOneBy({ id: siteId, ...scopeWhere(scope) }) : null;
    if (site === null) {
      throw new AppError('NOT_FOUND', 'No site with this id in your vault');
    }
    return site;
  }

  /**
   * A site of the scope with its credential (null when it has none), in one round trip: what a tool
   * call needs before it can reach the site.
   */
  async findForCall(scope: Scope, siteId: string): Promise<{ site: SiteEntity; credential: CredentialEntity | null }> {
    const [where, params] = scopeSql(scope, 's');
    // The scope's condition as the query builders use it, its named parameters made positional.
    const [sql, values] = this.dataSource.driver.escapeQueryWithParameters(
      `SELECT ${this.siteRows.select()}, ${this.credentialRows.select()} FROM sites s ` +
        `LEFT JOIN site_credentials c ON c.site_id = s.id WHERE s.id = :siteId AND ${where}`,
      { ...params, siteId },
    );
    const rows: Array<Record<string, unknown>> = UUID.test(siteId) ? await this.dataSource.query(sql, values) : [];
    const site = rows[0] === undefined ? null : this.siteRows.from(rows[0]);
    if (site === null) {
      throw new AppError('NOT_FOUND', 'No site with this id in your vault');
    }
    return { site, credential: this.credentialRows.from(rows[0]!) };
  }

  /** Moves one of the caller's personal sites into the scope's workspace (credential included). */
  async share(scope: Scope, siteId: string): Promise<SiteResponse> {
    const workspace = requireWorkspace(scope);
    requireRole(scope, 'admin', 'Sharing a site');
    const site = await this.findInScope({ user: scope.user, workspace: null }, siteId);
    if (await this.sites.exists({ where: { workspaceId: workspace.id, url: site.url } })) {
      throw AppError.validation([{ field: 'url', message: 'the workspace already has this site' }]);
    }
    site.workspaceId = workspace.id;
    await this.sites.save(site);
    return this.describe(site);
  }

  async describe(site: SiteEntity): Promise<SiteResponse> {
    return toSiteResponse(site, await this.credentials.findForSite(site.id));
  }

  async add(scope: Scope, rawUrl: string): Promise<SiteResponse> {
    requireRole(scope, 'admin', 'Adding a site');
    const url = normaliseSiteUrl(this.http.assertSiteUrl(rawUrl));
    const manifest = await this.manifests.fetch(url);
    const site = await this.dataSource.transaction(async (em) => {
      // Serialise adds per limits owner, so the tier limit holds under concurrent requests.
      const owner = await em
        .getRepository(UserEntity)
        .createQueryBuilder('u')
        .setLock('pessimistic_write')
        .where('u.id = :id', { id: limitsUser(scope).id })
        .getOneOrFail();
      const sites = em.getRepository(SiteEntity);
      if (await sites.exists({ where: { ...scopeWhere(scope), url } })) {
        throw AppError.validation([{ field: 'url', message: 'this site is already in your vault' }]);
      }
      requireBelow(
        owner,
        await sites.countBy(scopeWhere(scope)),
        (l) => l.vaultSites,
        'VAULT_LIMIT_REACHED',
        'sites in the vault',
      );
      return sites.save(
        sites.create({
          userId: scope.user.id,
          workspaceId: scope.workspace?.id ?? null,
          url,
          manifest,
          manifestFetchedAt: new Date(),
        }),
      );
    });
    return toSiteResponse(site, null);
  }

  async list(scope: Scope, query: PageQuery): Promise<Page<SiteResponse>> {
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
    const bySite = new Map(credentials.map((c) => [c.siteId, c]));
    return pageOf(rows, query.limit, (site) => toSiteResponse(site, bySite.get(site.id) ?? null));
  }

  async refreshManifest(site: SiteEntity): Promise<SiteResponse> {
    site.manifest = await this.manifests.fetch(site.url);
    site.manifestFetchedAt = new Date();
    await this.sites.save(site);
    return this.describe(site);
  }

  /** Deletes the site; its credential and pending OAuth states go with it (ON DELETE CASCADE). */
  async remove(site: SiteEntity): Promise<void> {
    await this.sites.delete({ id: site.id });
  }

  async storeToken(site: SiteEntity, token: string, expiresAt: string | undefined): Promise<TokenAnswer> {
    const row = await this.credentials.insertBearer(site.id, token, parseExpiry(expiresAt));
    if (row === null) {
      throw new AppError(
        'TOKEN_EXISTS',
        'A credential for this site is already in the vault: update it with PATCH or delete it first',
      );
    }
    return { tokenHint: row.tokenHint, expiresAt: row.expiresAt?.toISOString() ?? null };
  }

  async replaceToken(site: SiteEntity, token: string, expiresAt: string | undefined): Promise<TokenAnswer> {
    const row = await this.credentials.replaceWithBearer(site.id, token, parseExpiry(expiresAt));
    if (row === null) {
      throw new AppError('NOT_FOUND', 'No credential for this site in the vault: store one with POST first');
    }
    return { tokenHint: row.tokenHint, expiresAt: row.expiresAt?.toISOString() ?? null };
  }

  async deleteToken(site: SiteEntity): Promise<void> {
    if (!(await this.credentials.delete(site.id))) {
      throw new AppError('NOT_FOUND', 'No credential for this site in the vault');
    }
  }
}

function parseExpiry(expiresAt: string | undefined): Date | null {
  if (expiresAt === undefined) {
    return null;
  }
  const date = new Date(expiresAt);
  if (date.getTime() <= Date.now()) {
    throw AppError.validation([{ field: 'expiresAt', message: 'must be in the future' }]);
  }
  return date;
}
