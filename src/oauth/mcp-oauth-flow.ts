import { computeScopeUnion } from '@modelcontextprotocol/client';
import { Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { AppError } from '../common/app-error.js';
import type { McpAuthorization } from '../sites/mcp-state.js';
import { mcpScopesFor } from '../sites/scopes.js';
import type { CredentialEntity } from '../vault/credential.entity.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { type McpClientIdentity, McpOAuthClients } from './mcp-oauth-clients.js';
import { OAuthConfigs } from './oauth-config.js';

/** An MCP server's authorization as a start needs it: what to ask, of whom, as whom. */
export interface McpStart {
  auth: McpAuthorization;
  identity: McpClientIdentity;
  scopes: string[];
}

/**
 * Authorization as MCP defines it (2025-06-18 and later): the protected resource's authorization
 * server found from its 401 (RFC 9728, RFC 8414; discovered by the MCP client and kept in
 * `sites.mcp.authorization`), PKCE S256 required, RFC 8707 `resource` on every request, RFC 9207
 * `iss` checked (and required when the server says it sends it), scopes from the challenge or the
 * least of `scopes_supported` the chosen tools need, and the step-up scope a 403
 * `insufficient_scope` stored on the credential added to them.
 */
@Injectable()
export class McpOAuthFlow {
  private readonly logger = new Logger('OAuth');

  constructor(
    private readonly configs: OAuthConfigs,
    private readonly clients: McpOAuthClients,
  ) {}

  /** The authorization of an MCP site, refused when the server cannot be used safely. */
  authorizationOf(site: SiteEntity): McpAuthorization {
    const auth = site.mcp?.authorization ?? null;
    if (auth === null) {
      throw AppError.validation([
        { field: 'site', message: 'this MCP server names no authorization server: store a bearer token instead' },
      ]);
    }
    if (!auth.codeChallengeMethods.includes('S256')) {
      // MCP requires PKCE, and only S256 keeps the code useless to whoever sees it in the browser.
      throw new AppError(
        'MANIFEST_INVALID',
        `${site.manifest.name}'s authorization server does not support PKCE S256`,
        [
          {
            field: 'auth',
            message: 'the authorization server does not offer PKCE with S256: the service cannot connect safely',
          },
        ],
      );
    }
    // A snapshot stored before `issParameterSupported` existed has none: false.
    return { ...auth, issParameterSupported: auth.issParameterSupported === true };
  }

  /**
   * What a start asks for: the challenge's scope, else the least of `scopes_supported` the chosen tools
   * need (mcpScopesFor; all of them while the server's tools are not known, before a first connection),
   * with what was granted and a step-up's scope added after a 403 `insufficient_scope`.
   */
  async prepare(
    site: SiteEntity,
    credential: CredentialEntity | null,
    tools: Array<{ name: string; scope?: string }>,
  ): Promise<McpStart> {
    const auth = this.authorizationOf(site);
    const offered = auth.scopesSupported ?? [];
    const base = auth.challengeScope ?? (tools.length === 0 ? offered : mcpScopesFor(offered, tools).scopes).join(' ');
    const granted = credential?.requiredScope ? (credential.scopes ?? []).join(' ') : undefined;
    const union = computeScopeUnion(base, granted, credential?.requiredScope ?? undefined) ?? '';
    const scopes = union.split(' ').filter(Boolean);
    const identity = await this.clients.identityFor(auth, site.manifest.name);
    return { auth, identity, scopes };
  }

  authorizationUrl(start: McpStart, state: string, codeChallenge: string): string {
    const url = oidc.buildAuthorizationUrl(this.configs.forMcp(start.auth, start.identity), {
      redirect_uri: this.configs.redirectUri,
      ...(start.scopes.length > 0 ? { scope: start.scopes.join(' ') } : {}),
      state,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
      resource: start.auth.resource,
    });
    return url.toString();
  }

  /** Redeems the code at the server's token endpoint, with the verifier and `resource`. */
  async exchange(
    site: SiteEntity,
    currentUrl: URL,
    verifier: string,
    state: string,
    iss: string | undefined,
  ): Promise<oidc.TokenEndpointResponse> {
    const auth = this.authorizationOf(site);
    if (iss === undefined && auth.issParameterSupported) {
      // RFC 9207 §2.4: a server that says it sends `iss` must have sent it; without it, a mix-up is possible.
      this.logger.warn(
        `OAuth response for MCP site ${site.id} carried no iss though ${auth.issuer} sends one: refused`,
      );
      throw AppError.validation([{ field: 'iss', message: `is missing: ${site.manifest.name} always sends it` }]);
    }
    if (iss !== undefined && iss !== auth.issuer) {
      // RFC 9207: the response came from another authorization server than the one the flow went to.
      this.logger.warn(`OAuth response for MCP site ${site.id} carried another issuer than ${auth.issuer}: refused`);
      throw AppError.validation([{ field: 'iss', message: `is not the issuer of ${site.manifest.name}` }]);
    }
    const identity = await this.clients.identityFor(auth, site.manifest.name);
    try {
      return await oidc.authorizationCodeGrant(
        this.configs.forMcp(auth, identity),
        currentUrl,
        { pkceCodeVerifier: verifier, expectedState: state },
        { resource: auth.resource },
      );
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_client') {
        await this.clients.forget(identity);
      }
      throw err;
    }
  }
}
