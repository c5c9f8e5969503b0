import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { expectedIssuer, type Manifest } from '../sites/manifest.js';
import { SiteHttpClient } from '../sites/site-http.js';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** A programming error: an OAuth configuration asked for a site whose manifest uses no OAuth 2.0. */
export class NotAnOAuthSiteError extends Error {
  override readonly name = 'NotAnOAuthSiteError';

  constructor() {
    super('the site does not use OAuth 2.0');
  }
}

/** openid-client configurations for sites, whose every request goes through the SSRF-guarded client. */
@Injectable()
export class OAuthConfigs {
  constructor(
    private readonly http: SiteHttpClient,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

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
      },
      this.settings.oauthClientId,
      undefined,
      // A public client: PKCE instead of a secret, and no client_secret on the wire.
      oidc.None(),
    );
    config[oidc.customFetch] = this.fetch;
    return config;
  }

  /** A Fetch-API-shaped function over SiteHttpClient (HTTPS only, SSRF guard, test CA). */
  private readonly fetch: oidc.CustomFetch = async (url, options) => {
    const body =
      options.body === undefined || options.body === null
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : options.body instanceof URLSearchParams
            ? options.body.toString()
            : Buffer.from(options.body as ArrayBuffer).toString('utf8');
    const response = await this.http.request({
      method: options.method === 'GET' ? 'GET' : 'POST',
      url,
      headers: options.headers,
      body,
      signal: options.signal,
      timeoutMs: 15_000,
    });
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : new Uint8Array(response.body), {
      status: response.status,
      headers: response.headers,
    });
  };
}
