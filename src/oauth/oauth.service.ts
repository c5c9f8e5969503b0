import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { AppError } from '../common/app-error.js';
import { assertStoredManifestUsable, expectedIssuer, type OAuthManifestAuth } from '../sites/manifest.js';
import { scopesFor, type SiteScope } from '../sites/scopes.js';
import { publicNetworkMessage, SiteNetworkError } from '../sites/site-http.js';
import { CredentialsService } from '../vault/credentials.service.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import { roleAtLeast } from '../workspaces/scope.js';
import { McpOAuthFlow } from './mcp-oauth-flow.js';
import { OAuthConfigs } from './oauth-config.js';
import { OAuthRepository } from './oauth.repository.js';

/** How long a started authorization may take before its state expires. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;

/** What the site's redirect brought to the callback (validated by OAuthCompleteDto). */
export interface OAuthCompletion {
  code?: string;
  state: string;
  iss?: string;
  error?: string;
}

export interface CallbackResult {
  siteId: string;
  /** agentsite scopes for an agentsite site; the server's own scope names for an MCP server. */
  scopes: string[];
  connected: true;
}

function hashState(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** OAuth 2.0 authorization code flow with PKCE (S256), as a public client, through openid-client. */
@Injectable()
export class OAuthService {
  private readonly logger = new Logger('OAuth');

  constructor(
    private readonly oauthRows: OAuthRepository,
    private readonly configs: OAuthConfigs,
    private readonly cipher: VaultCipher,
    private readonly credentials: CredentialsService,
    private readonly mcp: McpOAuthFlow,
  ) {}

  /** Builds the authorization URL asking for the least scopes the chosen tools need. */
  async start(
    userId: string,
    site: SiteEntity,
    toolNames: string[] | undefined,
  ): Promise<{ authorizationUrl: string; scopes: string[] }> {
    const { manifest } = site;
    if (site.protocol === 'mcp') {
      // The server's own scopes: the least of them the chosen tools need, where its scope names allow it.
      const tools = chosenTools(manifest.tools, toolNames);
      const start = await this.mcp.prepare(site, await this.credentials.findForSite(site.id), tools);
      const { state, challenge } = await this.pendingState(userId, site.id, start.scopes);
      return { authorizationUrl: this.mcp.authorizationUrl(start, state, challenge), scopes: start.scopes };
    }
    if (manifest.auth.type !== 'oauth2') {
      throw AppError.validation([{ field: 'site', message: 'this site uses bearer tokens, not OAuth 2.0' }]);
    }
    // A manifest stored before the registrable-domain rule existed is held to it here.
    assertStoredManifestUsable(manifest, site.url);
    const tools = chosenTools(manifest.tools, toolNames);
    const scopes = scopesFor(tools);
    const offered = new Set(manifest.auth.scopes);
    const missing = scopes.filter((s) => !offered.has(s));
    if (missing.length > 0) {
      throw AppError.validation([
        { field: 'tools', message: `the site does not offer the scope(s) ${missing.join(', ')}` },
      ]);
    }
    const { state, challenge } = await this.pendingState(userId, site.id, scopes);
    const url = oidc.buildAuthorizationUrl(this.configs.forManifest(manifest), {
      redirect_uri: this.configs.redirectUri,
      scope: scopes.join(' '),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return { authorizationUrl: url.toString(), scopes };
  }

  /** A new single-use state bound to the user and the site, its PKCE verifier sealed beside it. */
  private async pendingState(
    userId: string,
    siteId: string,
    scopes: string[],
  ): Promise<{ state: string; challenge: string }> {
    await this.oauthRows.purgeExpiredStates();
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    const stateHash = hashState(state);
    const sealed = this.cipher.seal(verifier, `oauth_states:${stateHash}`);
    await this.oauthRows.insertState({
      stateHash,
      userId,
      siteId,
      ...sealed,
      scopes: scopes as SiteScope[],
      expiresAt: new Date(Date.now() + OAUTH_STATE_TTL_MS),
      usedAt: null,
    });
    return { state, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
  }

  /**
   * Completes the flow for the user who started it. The state is consumed first (single use, so a
   * refused attempt spends it too); its user must be the caller: the state alone proves only that
   * someone's browser went through the site, not whose vault the grant belongs in. The code goes to
   * the token endpoint only after every check passed.
   */
  async complete(userId: string, input: OAuthCompletion): Promise<CallbackResult> {
    const stateHash = hashState(input.state);
    // Atomic consume: only one request can ever use a state, and only before it expires.
    const pending = await this.oauthRows.consumeState(stateHash);
    if (pending === undefined) {
      throw AppError.validation([
        { field: 'state', message: 'is unknown, already used or expired; start the connection again' },
      ]);
    }
    if (pending.userId !== userId) {
      this.logger.warn(`OAuth state of user ${pending.userId} presented by user ${userId}: refused and spent`);
      throw new AppError(
        'PERMISSION_DENIED',
        'This connection was started by another user: only they can complete it (the authorization is void)',
      );
    }
    if (input.error !== undefined) {
      throw AppError.validation([{ field: 'error', message: `the site answered ${input.error}` }]);
    }
    const site = await this.oauthRows.findSite(pending.siteId);
    if (site === null || !(await this.mayConnect(userId, site))) {
      throw AppError.validation([
        { field: 'state', message: 'the site of this connection is no longer in your vault' },
      ]);
    }
    if (site.manifest.auth.type !== 'oauth2' && site.protocol !== 'mcp') {
      throw AppError.validation([{ field: 'state', message: 'the site no longer uses OAuth 2.0' }]);
    }
    const issuer = site.protocol === 'mcp' ? null : expectedIssuer(site.manifest.auth as OAuthManifestAuth);
    if (issuer !== null && input.iss !== undefined && input.iss !== issuer) {
      // RFC 9207: the response came from another authorization server than the one the flow went to.
      this.logger.warn(`OAuth response for site ${site.id} carried another issuer than ${issuer}: refused`);
      throw AppError.validation([{ field: 'iss', message: `is not the issuer of ${site.manifest.name}` }]);
    }
    const verifier = this.cipher.open(pending, `oauth_states:${stateHash}`);
    // The URL the site redirected to: our registered callback with the parameters the browser brought.
    const currentUrl = new URL(this.configs.redirectUri);
    currentUrl.searchParams.set('code', input.code ?? '');
    currentUrl.searchParams.set('state', input.state);
    if (input.iss !== undefined) {
      currentUrl.searchParams.set('iss', input.iss);
    }
    let tokens: oidc.TokenEndpointResponse;
    try {
      tokens =
        site.protocol === 'mcp'
          ? await this.mcp.exchange(site, currentUrl, verifier, input.state, input.iss)
          : await oidc.authorizationCodeGrant(this.configs.forManifest(site.manifest), currentUrl, {
              pkceCodeVerifier: verifier,
              expectedState: input.state,
            });
    } catch (err) {
      throw exchangeFailure(err, site);
    }
    const granted = (
      typeof tokens.scope === 'string' ? tokens.scope.split(' ').filter(Boolean) : pending.scopes
    ) as SiteScope[];
    await this.credentials.storeOAuth(site.id, {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? null,
      expiresInSeconds: tokens.expires_in,
      scopes: granted,
    });
    this.logger.log(`site ${site.id} connected with scopes ${granted.join(' ')}`);
    return { siteId: site.id, scopes: granted, connected: true };
  }

  /** Whether the user may still connect the site: theirs, or in a workspace where they are an admin. */
  private async mayConnect(userId: string, site: SiteEntity): Promise<boolean> {
    if (site.workspaceId === null) {
      return site.userId === userId;
    }
    const membership = await this.oauthRows.findMembership(site.workspaceId, userId);
    return membership !== null && roleAtLeast(membership.role, 'admin');
  }
}

/** The tools a start is for: the named ones (VALIDATION_ERROR on `tools` for a name the site lacks), else all. */
function chosenTools<T extends { name: string }>(tools: T[], names: string[] | undefined): T[] {
  const unknown = (names ?? []).filter((name) => !tools.some((t) => t.name === name));
  if (unknown.length > 0) {
    throw AppError.validation(unknown.map((name) => ({ field: 'tools', message: `the site has no tool "${name}"` })));
  }
  return names === undefined ? tools : tools.filter((t) => names.includes(t.name));
}

const exchangeLogger = new Logger('OAuth');

function exchangeFailure(err: unknown, site: SiteEntity): AppError {
  if (err instanceof oidc.ResponseBodyError) {
    return new AppError(
      'TOOL_EXECUTION_ERROR',
      `${site.manifest.name} refused the code exchange: ${err.error_description ?? err.error}`,
    );
  }
  if (err instanceof AppError) {
    return err;
  }
  // The error's own text (socket addresses, ports, library internals) goes to the log only.
  exchangeLogger.warn(`code exchange for site ${site.id} failed: ${(err as Error).message}`);
  const gist = err instanceof SiteNetworkError ? publicNetworkMessage(err) : 'the answer could not be used';
  return new AppError('TOOL_EXECUTION_ERROR', `Code exchange with ${site.manifest.name} failed: ${gist}`);
}
