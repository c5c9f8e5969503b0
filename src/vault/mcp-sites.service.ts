import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import type { Manifest } from '../sites/manifest.js';
import { McpClient } from '../sites/mcp-client.js';
import { discoverAuthorization } from '../sites/mcp-discovery.js';
import type { McpAuthorization, McpServerState } from '../sites/mcp-state.js';
import { mapMcpTools, mcpManifest } from '../sites/mcp-tools.js';
import { publicNetworkMessage, SiteNetworkError } from '../sites/site-http.js';
import { CredentialsService } from './credentials.service.js';
import type { SiteEntity } from './site.entity.js';
import { VaultRepository } from './vault.repository.js';

/** The longest a tool list's cache hint is honoured. */
const MAX_FRESH_MS = 86_400_000;

/** What the vault stores of an MCP server after listing it (or being refused). */
export interface McpSnapshot {
  manifest: Manifest;
  mcp: McpServerState;
}

/** The AppError or network error at the root of an SDK error (the SDK wraps what its fetch threw). */
function rootCause(err: unknown): unknown {
  let current = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current instanceof AppError || current instanceof SiteNetworkError) {
      return current;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return err;
}

/**
 * MCP servers in the vault: inspecting one at an address (its tools, or the authorization its 401
 * leads to), listing again on refresh and right after a credential is stored.
 */
@Injectable()
export class McpSites {
  private readonly logger = new Logger('McpSites');
  private tokenSource: ((site: SiteEntity) => Promise<string>) | null = null;

  constructor(
    private readonly client: McpClient,
    private readonly sites: VaultRepository,
    private readonly credentials: CredentialsService,
  ) {
    credentials.onStored((siteId) => this.relist(siteId));
  }

  /**
   * Lists the server's tools at `endpoint` with `token` (or none): the snapshot to store, with no tools
   * and the discovered authorization when it answers 401/403. MANIFEST_NOT_FOUND when nothing there
   * speaks MCP (or it cannot be reached), MANIFEST_INVALID for a tool list that breaks the rules,
   * INVALID_URL for a refused address (the endpoint, a redirect, a metadata document).
   */
  async inspect(endpoint: string, token: string | null, previous: McpServerState | null = null): Promise<McpSnapshot> {
    let probe;
    try {
      probe = await this.client.probe(endpoint, token);
    } catch (err) {
      throw this.notFound(endpoint, rootCause(err));
    }
    if (probe.kind === 'unauthorized') {
      const authorization = await this.discover(endpoint, probe.challenge);
      return {
        manifest: mcpManifest(endpoint, null, [], authorization),
        mcp: { endpoint, protocolVersion: previous?.protocolVersion ?? null, authorization, toolsFreshUntil: null },
      };
    }
    const tools = mapMcpTools(probe.tools);
    const authorization = previous?.authorization ?? null;
    const fresh = probe.ttlMs === null ? null : new Date(Date.now() + Math.min(probe.ttlMs, MAX_FRESH_MS));
    return {
      manifest: mcpManifest(endpoint, probe.server, tools, authorization),
      mcp: {
        endpoint,
        protocolVersion: probe.protocolVersion,
        authorization,
        toolsFreshUntil: fresh?.toISOString() ?? null,
      },
    };
  }

  /** Lists the site's tools again with its stored credential (unless its cache hint says they are fresh). */
  async refresh(site: SiteEntity): Promise<SiteEntity> {
    const fresh = site.mcp?.toolsFreshUntil;
    if (fresh && Date.parse(fresh) > Date.now() && site.manifest.tools.length > 0) {
      return site;
    }
    const snapshot = await this.inspect(site.mcp?.endpoint ?? site.url, await this.tokenOf(site), site.mcp);
    site.manifest = snapshot.manifest;
    site.mcp = snapshot.mcp;
    site.manifestFetchedAt = new Date();
    await this.sites.save(site);
    return site;
  }

  /** After a credential was stored: an MCP site lists its tools with it (best effort: a failure is logged). */
  async relist(siteId: string): Promise<void> {
    const site = await this.sites.findById(siteId);
    if (site === null || site.protocol !== 'mcp') {
      return;
    }
    try {
      site.mcp = site.mcp === null ? null : { ...site.mcp, toolsFreshUntil: null };
      await this.refresh(site);
      this.logger.log(`MCP site ${siteId} listed ${site.manifest.tools.length} tools after its credential was stored`);
    } catch (err) {
      this.logger.warn(
        `MCP site ${siteId} could not list its tools after its credential was stored: ${(err as Error).message}`,
      );
    }
  }

  /**
   * How the site's usable token is had: registered by the tools feature (TokenRefreshService, which
   * refreshes an expired OAuth token through the single-flight lease; the vault cannot import it).
   */
  useTokenSource(source: (site: SiteEntity) => Promise<string>): void {
    this.tokenSource = source;
  }

  /** The usable access token (a bearer token or an OAuth access token), null when none is stored or usable. */
  private async tokenOf(site: SiteEntity): Promise<string | null> {
    if (this.tokenSource !== null) {
      try {
        return await this.tokenSource(site);
      } catch (err) {
        // Not connected, or the refresh failed: the stored token (if any) is what there is.
        this.logger.warn(`MCP site ${site.id}: no refreshed token for listing (${(err as Error).message})`);
      }
    }
    const row = await this.credentials.findForSite(site.id);
    if (row === null) {
      return null;
    }
    const secret = this.credentials.open(row);
    return secret.kind === 'bearer' ? secret.token : secret.accessToken;
  }

  private async discover(
    endpoint: string,
    challenge: Parameters<typeof discoverAuthorization>[2],
  ): Promise<McpAuthorization | null> {
    try {
      return await discoverAuthorization(this.client.fetch, endpoint, challenge);
    } catch (err) {
      const cause = rootCause(err);
      if (cause instanceof AppError) {
        throw cause;
      }
      throw new AppError('MANIFEST_INVALID', `The MCP server's authorization metadata could not be read`, [
        {
          field: 'authorization',
          message: cause instanceof SiteNetworkError ? publicNetworkMessage(cause) : 'could not be read',
        },
      ]);
    }
  }

  private notFound(endpoint: string, cause: unknown): Error {
    if (cause instanceof AppError) {
      return cause;
    }
    if (cause instanceof SiteNetworkError) {
      this.logger.warn(`MCP probe of ${endpoint} failed: ${cause.message}`);
      return new AppError(
        'MANIFEST_NOT_FOUND',
        `Could not reach the MCP server at ${endpoint}: ${publicNetworkMessage(cause)}`,
      );
    }
    this.logger.warn(`MCP probe of ${endpoint} failed: ${(cause as Error)?.message ?? String(cause)}`);
    return new AppError('MANIFEST_NOT_FOUND', `Nothing at ${endpoint} speaks MCP (Streamable HTTP)`);
  }
}
