import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { expectedIssuer, type Manifest } from '../sites/manifest.js';
import type { McpAuthorization } from '../sites/mcp-state.js';
import { SiteHttpClient } from '../sites/site-http.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { clientSecretBasic } from './client-secret-basic.js';
import { type McpClientIdentity, McpOAuthClients } from './mcp-oauth-clients.js';
import { siteFetchOf, type SiteFetch } from './site-fetch.js';

/** A programming error: an OAuth configuration asked for a site whose manifest uses no OAuth 2.0. */
export class NotAnOAuthSiteError extends Error {
  override readonly name = 'NotAnOAuthSiteError';

  constructor() {
    super('the site does not use OAuth 2.0');
  }
}

/** What a token request of a site needs: the client configuration and the parameters every request carries. */
export interface SiteOAuth {
  config: oidc.Configuration;
  /** RFC 8707 `resource` for an MCP server (on authorize, token, refresh); empty for agentsite sites. */
  parameters: Record<string, string>;
  /** The RFC 7009 endpoint, when the authorization server has one. */
  revocationEndpoint: string | null;
  /** The MCP client identity used (to forget a registration the server refuses). */
  identity?: McpClientIdentity;
}

/** openid-client configurations for sites, whose every request goes through the SSRF-guarded client. */
@Injectable()
export class OAuthConfigs {
  private readonly fetch: SiteFetch;

  constructor(
    http: SiteHttpClient,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly mcpClients: McpOAuthClients,
  ) {
    this.fetch = siteFetchOf(http);
  }

  get redirectUri(): string {
    return `${this.settings.publicBaseUrl}/api/oauth/callback`;
  }

  forManifest(manifest: Manifest): oidc.Configuration {
    if (manifest.auth.type !== 'oauth2') {
      throw new NotAnOAuthSiteError();
    }
    const config = new oidc.Configuration(
      {
        // openid-client compares an authorization response's `iss` with this (RFC 9207, mix-up defence).
        issuer: expectedIssuer(manifest.auth),
        authorization_endpoint: manifest.auth.authorization_url,
        token_endpoint: manifest.auth.token_url,
        ...(manifest.auth.revocation_url === undefined ? {} : { revocation_endpoint: manifest.auth.revocation_url }),
      },
      this.settings.oauthClientId,
      undefined,
      // A public client: PKCE instead of a secret, and no client_secret on the wire.
      oidc.None(),
    );
    config[oidc.customFetch] = (url, options) => this.fetch(url, options as RequestInit);
    return config;
  }

  /** The configuration of an MCP server's authorization server, with the identity the service has there. */
  forMcp(auth: McpAuthorization, identity: McpClientIdentity): oidc.Configuration {
    const config = new oidc.Configuration(
      {
        issuer: auth.issuer,
        authorization_endpoint: auth.authorizationEndpoint,
        token_endpoint: auth.tokenEndpoint,
        ...(auth.revocationEndpoint === null ? {} : { revocation_endpoint: auth.revocationEndpoint }),
      },
      identity.clientId,
      identity.clientSecret,
      clientAuthOf(identity),
    );
    config[oidc.customFetch] = (url, options) => this.fetch(url, options as RequestInit);
    return config;
  }

  /**
   * The configuration for a connected site's token requests (refresh, revocation): an agentsite site's
   * from its manifest; an MCP server's with the identity its credential was issued to (never a new
   * registration) and its `resource`. null: the site uses no OAuth 2.0, or no identity is known.
   */
  async forSite(site: SiteEntity): Promise<SiteOAuth | null> {
    const auth = site.protocol === 'mcp' ? (site.mcp?.authorization ?? null) : null;
    if (auth !== null) {
      const identity = await this.mcpClients.existingIdentity(auth);
      if (identity === null) {
        return null;
      }
      return {
        config: this.forMcp(auth, identity),
        parameters: { resource: auth.resource },
        revocationEndpoint: auth.revocationEndpoint,
        identity,
      };
    }
    if (site.protocol === 'mcp' || site.manifest.auth.type !== 'oauth2') {
      return null;
    }
    return {
      config: this.forManifest(site.manifest),
      parameters: {},
      revocationEndpoint: site.manifest.auth.revocation_url ?? null,
    };
  }
}

/** How a confidential MCP client authenticates; Basic with the WHATWG form encoding (client-secret-basic.ts). */
function clientAuthOf(identity: McpClientIdentity): oidc.ClientAuth {
  if (identity.clientSecret === undefined || identity.tokenEndpointAuthMethod === 'none') {
    return oidc.None();
  }
  return identity.tokenEndpointAuthMethod === 'client_secret_basic'
    ? clientSecretBasic(identity.clientSecret)
    : oidc.ClientSecretPost(identity.clientSecret);
}
