import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { DB_CONNECT_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS } from '../common/database/pool-limits.js';
import { publicNetworkMessage, SiteNetworkError } from '../sites/site-http.js';
import { needsReconnecting, notConnected, ToolCallFailure } from '../sites/tool-failure.js';
import type { CredentialEntity, CredentialSecret } from '../vault/credential.entity.js';
import { CredentialLeasesService } from '../vault/credential-leases.service.js';
import { CredentialsService, expiryOf } from '../vault/credentials.service.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { credentialAad, tokenHint, VaultCipher } from '../vault/vault-cipher.js';
import { OAuthConfigs, type SiteOAuth } from './oauth-config.js';

export interface UsableToken {
  token: string;
  /** The credential's generation the token belongs to (to tell a stale token after a 401). */
  generation: number;
  kind: CredentialEntity['kind'];
}

/** Refresh an OAuth access token this long before it expires. */
export const REFRESH_SKEW_MS = 60_000;

/** The whole token request of a refresh (every redirect hop included) is aborted after this. */
export const REFRESH_TIMEOUT_SECONDS = 20;
/** The refresh's final write: a pooled connection and one UPDATE, each bounded by the pool's settings. */
export const REFRESH_WRITE_BOUND_MS = DB_CONNECT_TIMEOUT_MS + DB_QUERY_TIMEOUT_MS;
/**
 * How long a claimed refresh lease lasts: half as long again as the longest refresh (token request plus
 * final write), so it does not lapse while its owner still works and another caller replays the
 * single-use refresh token. If it lapses all the same, the write below keeps the newer pair.
 */
export const REFRESH_LEASE_MS = Math.ceil(1.5 * (REFRESH_TIMEOUT_SECONDS * 1000 + REFRESH_WRITE_BOUND_MS));
/** How long a caller waits for another caller's refresh before giving up (more than the refresh may take). */
export const REFRESH_WAIT_MS = 30_000;
/** Between two reads of a credential whose refresh someone else holds. */
const REFRESH_POLL_MS = 150;

/**
 * A usable token for a vault credential, refreshing OAuth pairs. Across every API and worker process
 * exactly one caller uses a (single-use) refresh token: it claims a lease on the row with one atomic
 * UPDATE and makes the token request outside any transaction, holding no database connection; the
 * others re-read the row until the new pair is there (or the lease lapses and one of them takes over).
 */
@Injectable()
export class TokenRefreshService {
  private readonly logger = new Logger('Credentials');

  constructor(
    private readonly refreshes: CredentialLeasesService,
    private readonly credentials: CredentialsService,
    private readonly cipher: VaultCipher,
    private readonly configs: OAuthConfigs,
  ) {}

  /**
   * A token to call the site with. OAuth tokens near expiry are refreshed first; `staleGeneration`
   * (after a 401) forces a refresh unless someone already replaced that generation.
   */
  async tokenFor(
    site: SiteEntity,
    staleGeneration?: number,
    prefetched?: CredentialEntity | null,
  ): Promise<UsableToken> {
    const row = await this.credentials.usableRow(site, prefetched);
    if (row.kind === 'bearer') {
      const secret = this.credentials.open(row) as Extract<CredentialSecret, { kind: 'bearer' }>;
      return { token: secret.token, generation: row.generation, kind: 'bearer' };
    }
    const secret = this.credentials.open(row) as Extract<CredentialSecret, { kind: 'oauth2' }>;
    if (secret.refreshToken === null && staleGeneration === undefined) {
      // Nothing to renew it with: the access token serves until it expires, then the user reconnects.
      if (row.expiresAt !== null && row.expiresAt.getTime() <= Date.now()) {
        throw accessExpired(site.manifest.name, row.expiresAt);
      }
      return { token: secret.accessToken, generation: row.generation, kind: 'oauth2' };
    }
    if (needsRefresh(row) || (staleGeneration !== undefined && row.generation === staleGeneration)) {
      return this.refresh(site, row.generation);
    }
    return { token: secret.accessToken, generation: row.generation, kind: 'oauth2' };
  }

  /**
   * Single-flight refresh across processes. The caller that claims the row's lease refreshes; the others
   * re-read the row (short queries, no connection held between them) until the generation they saw has
   * been replaced, then use the new token.
   */
  async refresh(site: SiteEntity, seenGeneration: number): Promise<UsableToken> {
    const deadline = Date.now() + REFRESH_WAIT_MS;
    for (;;) {
      const row = await this.credentials.findForSite(site.id);
      if (row === null) {
        throw notConnected(site.manifest.name);
      }
      if (row.status === 'reauth_required') {
        throw needsReconnecting(site.manifest.name);
      }
      if (row.generation !== seenGeneration && !needsRefresh(row)) {
        // Another caller refreshed meanwhile (or the user stored a new credential).
        const secret = this.credentials.open(row);
        return {
          token: secret.kind === 'oauth2' ? secret.accessToken : secret.token,
          generation: row.generation,
          kind: row.kind,
        };
      }
      const owner = randomUUID();
      if (await this.refreshes.claimLease(row, owner, REFRESH_LEASE_MS)) {
        return this.refreshUnderLease(site, row, owner);
      }
      if (Date.now() >= deadline) {
        throw new ToolCallFailure(
          'timeout',
          `The token refresh for ${site.manifest.name} did not finish within ${REFRESH_WAIT_MS / 1000} s`,
        );
      }
      await delay(REFRESH_POLL_MS + Math.floor(Math.random() * REFRESH_POLL_MS));
    }
  }

  /**
   * The token request, under our lease and outside any transaction. The new pair is written when the row
   * is still at the generation we refreshed, even if our lease lapsed meanwhile: the refresh token we
   * used is spent at the provider, so our pair is the one that works.
   */
  private async refreshUnderLease(site: SiteEntity, row: CredentialEntity, owner: string): Promise<UsableToken> {
    const claimedAt = Date.now();
    let secret: CredentialSecret;
    try {
      secret = this.credentials.open(row);
    } catch (err) {
      await this.refreshes.releaseLease(row, owner);
      throw err;
    }
    let oauth: SiteOAuth | null = null;
    try {
      oauth = secret.kind === 'oauth2' && secret.refreshToken !== null ? await this.configs.forSite(site) : null;
    } finally {
      if (oauth === null) {
        await this.refreshes.releaseLease(row, owner);
      }
    }
    if (oauth === null || secret.kind !== 'oauth2' || secret.refreshToken === null) {
      throw new ToolCallFailure(
        'unauthorized',
        `${site.manifest.name} refused the stored token and it cannot be refreshed`,
      );
    }
    let tokens: oidc.TokenEndpointResponse;
    try {
      oauth.config.timeout = REFRESH_TIMEOUT_SECONDS;
      // An MCP server's `resource` (RFC 8707) goes on the refresh too, so the new token is bound to it.
      tokens = await oidc.refreshTokenGrant(oauth.config, secret.refreshToken, oauth.parameters);
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
        return this.afterInvalidGrant(site, row, owner);
      }
      await this.refreshes.releaseLease(row, owner);
      throw refreshFailure(err, site);
    }
    const next: CredentialSecret = {
      kind: 'oauth2',
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? secret.refreshToken,
    };
    const sealed = this.cipher.seal(JSON.stringify(next), credentialAad(row.id, row.siteId));
    // Fenced by generation, not by lease owner: whoever took a lapsed lease over is replaying the spent
    // refresh token, and its invalid_grant must not outlive our pair (status back to active with it).
    // `prev` is the row before this statement, to tell whether our lease was still ours.
    const written = await this.refreshes.writeRefreshed(row, {
      sealed,
      tokenHint: tokenHint(tokens.access_token),
      expiresAt: expiryOf(tokens.expires_in),
    });
    const elapsedMs = Date.now() - claimedAt;
    if (written === undefined) {
      // A newer generation is stored (the user replaced the credential, or another caller refreshed after
      // our lease lapsed): that one stands; this access token still works for this call.
      const log = elapsedMs >= REFRESH_LEASE_MS ? 'error' : 'warn';
      this.logger[log](
        `credential ${row.id}: a newer generation was stored during its refresh from generation ${row.generation} ` +
          `(${elapsedMs} ms, lease ${REFRESH_LEASE_MS} ms); the refreshed pair is not kept`,
      );
      return { token: tokens.access_token, generation: row.generation, kind: 'oauth2' };
    }
    const generation = written.generation;
    if (written.prevOwner !== owner) {
      this.logger.error(
        `credential ${row.id}: refresh lease lost after ${elapsedMs} ms (lease ${REFRESH_LEASE_MS} ms); ` +
          `the refreshed pair is kept as generation ${generation}`,
      );
    } else {
      this.logger.log(`refreshed credential ${row.id} (generation ${generation})`);
    }
    return { token: tokens.access_token, generation, kind: 'oauth2' };
  }

  /**
   * The provider refused our refresh token. Marked reauth_required only while the lease is still ours on
   * the generation we refreshed: an invalid_grant because another caller (whose lease we took over after
   * it lapsed) already spent that token must not throw away the newer pair it stored.
   */
  private async afterInvalidGrant(site: SiteEntity, row: CredentialEntity, owner: string): Promise<UsableToken> {
    const marked = await this.refreshes.markReauthRequired(row, owner);
    if (!marked) {
      const current = await this.credentials.findForSite(site.id);
      if (current !== null && current.status === 'active' && current.generation !== row.generation) {
        this.logger.error(
          `credential ${row.id}: refresh from generation ${row.generation} refused (invalid_grant) after its lease ` +
            `was lost; generation ${current.generation} stored meanwhile is kept and used`,
        );
        const secret = this.credentials.open(current);
        return {
          token: secret.kind === 'oauth2' ? secret.accessToken : secret.token,
          generation: current.generation,
          kind: current.kind,
        };
      }
    }
    this.logger.warn(
      `refresh of credential ${row.id} refused (invalid_grant)` +
        (marked ? '; marked reauth_required' : '; the row had changed meanwhile, left as it is'),
    );
    throw new ToolCallFailure('reauth_required', `${site.manifest.name} refused the refresh: reconnect with OAuth`);
  }
}

const refreshLogger = new Logger('Credentials');

/**
 * An OAuth connection whose access token expired and that came without a refresh token: refused before
 * anything is sent, and not retried (only the user can reconnect it).
 */
export function accessExpired(siteName: string, expiredAt: Date): ToolCallFailure {
  const at = `${expiredAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return new ToolCallFailure(
    'reauth_required',
    `${siteName} needs reconnecting: its access expired at ${at} and it gave no refresh token`,
  );
}

function needsRefresh(row: CredentialEntity): boolean {
  return row.kind === 'oauth2' && row.expiresAt !== null && row.expiresAt.getTime() - REFRESH_SKEW_MS <= Date.now();
}

function refreshFailure(err: unknown, site: SiteEntity): ToolCallFailure {
  if (err instanceof oidc.ResponseBodyError) {
    return new ToolCallFailure(
      err.status >= 500 ? 'server_error' : 'unauthorized',
      `${site.manifest.name} refused the token refresh: ${err.error_description ?? err.error}`,
    );
  }
  // The error's own text (socket addresses, ports, library internals) goes to the log only.
  refreshLogger.warn(`token refresh for site ${site.id} failed: ${(err as Error).message}`);
  if (err instanceof SiteNetworkError) {
    const kind = err.kind === 'timeout' ? 'timeout' : err.kind === 'redirect' ? 'redirected' : 'network';
    return new ToolCallFailure(kind, `Token refresh at ${site.manifest.name} failed: ${publicNetworkMessage(err)}`);
  }
  return new ToolCallFailure('network', `Token refresh at ${site.manifest.name} failed: the answer could not be used`);
}
