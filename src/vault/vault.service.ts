import { Injectable } from '@nestjs/common';
import { requireBelow } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { type Page, type PageQuery, pageOf } from '../common/pagination.js';
import { ManifestFetcher, normaliseSiteUrl } from '../sites/manifest-fetcher.js';
import type { SiteProtocol } from '../sites/mcp-state.js';
import { SiteHttpClient } from '../sites/site-http.js';
import { limitsUser, requireRole, requireWorkspace, type Scope } from '../workspaces/scope.js';
import type { CredentialEntity } from './credential.entity.js';
import { CredentialRemovalHooks } from './credential-removal-hooks.js';
import { CredentialsService } from './credentials.service.js';
import { McpSites } from './mcp-sites.service.js';
import { type SiteResponse, type TokenAnswer, toSiteResponse } from './site-response.js';
import type { SiteEntity } from './site.entity.js';
import { VaultRepository } from './vault.repository.js';
import { UUID } from '../common/ids.js';

export { type SiteResponse, type TokenAnswer, toSiteResponse } from './site-response.js';

/** A user's vault: sites with their manifests, and the credentials for them. */
@Injectable()
export class VaultService {
  constructor(
    private readonly sites: VaultRepository,
    private readonly http: SiteHttpClient,
    private readonly manifests: ManifestFetcher,
    private readonly credentials: CredentialsService,
    private readonly mcpSites: McpSites,
    private readonly removalHooks: CredentialRemovalHooks,
  ) {}

  /** A site of the scope, or NOT_FOUND (also for another user's or workspace's: its existence is not revealed). */
  async findInScope(scope: Scope, siteId: string): Promise<SiteEntity> {
    const site = UUID.test(siteId) ? await this.sites.findInScope(scope, siteId) : null;
    if (site === null) {
      throw new AppError('NOT_FOUND', 'No site with this id in your vault');
    }
    return site;
  }

  /**
   * The scope's site at this address (normalised as when it was added), or NOT_FOUND: what a
   * conformance check through the API may reach. An address the service refuses answers as adding it would.
   */
  async findByUrl(scope: Scope, rawUrl: string): Promise<SiteEntity> {
    const url = normaliseSiteUrl(this.http.assertSiteUrl(rawUrl));
    const site = await this.sites.findByUrl(scope, url);
    if (site === null) {
      throw new AppError('NOT_FOUND', `No site at ${url} in your vault: add it first (POST /api/vault/sites)`);
    }
    return site;
  }

  /**
   * A site of the scope with its credential (null when it has none), in one round trip: what a tool
   * call needs before it can reach the site.
   */
  async findForCall(scope: Scope, siteId: string): Promise<{ site: SiteEntity; credential: CredentialEntity | null }> {
    const found = UUID.test(siteId) ? await this.sites.findWithCredential(scope, siteId) : null;
    if (found === null) {
      throw new AppError('NOT_FOUND', 'No site with this id in your vault');
    }
    return found;
  }

  /** Moves one of the caller's personal sites into the scope's workspace (credential included). */
  async share(scope: Scope, siteId: string): Promise<SiteResponse> {
    const workspace = requireWorkspace(scope);
    requireRole(scope, 'admin', 'Sharing a site');
    const site = await this.findInScope({ user: scope.user, workspace: null }, siteId);
    // The workspace's sites count against its owner's vault limit, as when a site is added there.
    const moved = await this.sites.moveToWorkspace(workspace.id, limitsUser(scope).id, site, (owner, taken, count) => {
      if (taken) {
        throw AppError.validation([{ field: 'url', message: 'the workspace already has this site' }]);
      }
      requireBelow(owner, count, (l) => l.vaultSites, 'VAULT_LIMIT_REACHED', 'sites in the vault');
    });
    if (!moved) {
      throw new AppError('NOT_FOUND', 'No site with this id in your vault');
    }
    return this.describe(site);
  }

  async describe(site: SiteEntity): Promise<SiteResponse> {
    const credential = await this.credentials.findForSite(site.id);
    return toSiteResponse(site, credential, credential !== null && this.credentials.refreshable(credential));
  }

  /**
   * Adds the site at `rawUrl`: `agentsite` (its manifest), `mcp` (an MCP server: its tools, or
   * needs_connection when it asks for authorization), or, without `protocol`, the agentsite manifest
   * first and then MCP at the address.
   */
  async add(scope: Scope, rawUrl: string, protocol?: SiteProtocol): Promise<SiteResponse> {
    requireRole(scope, 'admin', 'Adding a site');
    const url = normaliseSiteUrl(this.http.assertSiteUrl(rawUrl));
    const found = await this.detect(url, protocol);
    // Serialised per limits owner, so the tier limit holds under concurrent requests.
    const site = await this.sites.add(
      scope,
      limitsUser(scope).id,
      {
        userId: scope.user.id,
        workspaceId: scope.workspace?.id ?? null,
        url,
        ...found,
        manifestFetchedAt: new Date(),
      },
      (owner, taken, count) => {
        if (taken) {
          throw AppError.validation([{ field: 'url', message: 'this site is already in your vault' }]);
        }
        requireBelow(owner, count, (l) => l.vaultSites, 'VAULT_LIMIT_REACHED', 'sites in the vault');
      },
    );
    return toSiteResponse(site, null);
  }

  private async detect(
    url: string,
    protocol: SiteProtocol | undefined,
  ): Promise<Pick<SiteEntity, 'protocol' | 'manifest' | 'mcp'>> {
    if (protocol === 'mcp') {
      return { protocol: 'mcp', ...(await this.mcpSites.inspect(url, null)) };
    }
    try {
      return { protocol: 'agentsite', manifest: await this.manifests.fetch(url), mcp: null };
    } catch (err) {
      if (protocol === 'agentsite' || !(err instanceof AppError) || err.code !== 'MANIFEST_NOT_FOUND') {
        throw err;
      }
    }
    try {
      return { protocol: 'mcp', ...(await this.mcpSites.inspect(url, null)) };
    } catch (err) {
      if (err instanceof AppError && err.code === 'MANIFEST_NOT_FOUND') {
        throw new AppError(
          'MANIFEST_NOT_FOUND',
          `${url} has no agentsite manifest (${url}/.well-known/agentsite.json) and does not speak MCP`,
        );
      }
      throw err;
    }
  }

  /** Every site of the scope's vault (the MCP endpoint lists their tools), in creation order, at most `max`. */
  async sitesOf(scope: Scope, max = 500): Promise<readonly SiteEntity[]> {
    return this.sites.firstSites(scope, max);
  }

  async list(scope: Scope, query: PageQuery): Promise<Page<SiteResponse>> {
    const { rows, credentials } = await this.sites.page(scope, query);
    const bySite = new Map(credentials.map((c) => [c.siteId, c]));
    return pageOf(rows, query.limit, (site) => {
      const credential = bySite.get(site.id) ?? null;
      return toSiteResponse(site, credential, credential !== null && this.credentials.refreshable(credential));
    });
  }

  async refreshManifest(site: SiteEntity): Promise<SiteResponse> {
    if (site.protocol === 'mcp') {
      return this.describe(await this.mcpSites.refresh(site));
    }
    site.manifest = await this.manifests.fetch(site.url);
    site.manifestFetchedAt = new Date();
    await this.sites.save(site);
    return this.describe(site);
  }

  /** Deletes the site; its credential and pending OAuth states go with it (ON DELETE CASCADE). */
  async remove(site: SiteEntity): Promise<void> {
    const credential = await this.credentials.findForSite(site.id);
    await this.sites.delete(site);
    if (credential !== null) {
      this.removalHooks.removed(site, credential);
    }
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
    const credential = await this.credentials.findForSite(site.id);
    if (!(await this.credentials.delete(site.id))) {
      throw new AppError('NOT_FOUND', 'No credential for this site in the vault');
    }
    if (credential !== null) {
      // The tokens are revoked where they were issued (best effort, in the background).
      this.removalHooks.removed(site, credential);
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
