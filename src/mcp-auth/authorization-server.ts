import { Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider from 'oidc-provider';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { mcpResourceUrl } from '../mcp-server/caller.js';
import { guardedFetch } from '../sites/mcp-fetch.js';
import { SiteHttpClient } from '../sites/site-http.js';
import { McpAuthRepository } from './mcp-auth.repository.js';
import { ArtifactStore } from './oidc-adapter.js';
import { providerConfiguration } from './provider-config.js';

/** Where oidc-provider is mounted: the issuer is `{PUBLIC_BASE_URL}/mcp-oauth`. */
export const MCP_OAUTH_PATH = '/mcp-oauth';

/** The longest a Client ID Metadata Document may be (bytes) and the wait for it (ms). */
const CLIENT_DOCUMENT_MAX_BYTES = 64 * 1024;
const CLIENT_DOCUMENT_TIMEOUT_MS = 5_000;

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * agentsite's OAuth 2.1 authorization server for MCP clients: oidc-provider, configured in
 * provider-config.ts, its state in PostgreSQL (oidc-adapter.ts). app.factory.ts mounts `handler`
 * at /mcp-oauth, before the API's body parsers (the provider reads its own bodies).
 */
@Injectable()
export class McpAuthorizationServer {
  readonly provider: Provider;
  readonly issuer: string;
  readonly resource: string;
  private readonly logger = new Logger('McpAuth');

  constructor(@Inject(SETTINGS) settings: Settings, repository: McpAuthRepository, http: SiteHttpClient) {
    this.issuer = `${settings.publicBaseUrl}${MCP_OAUTH_PATH}`;
    this.resource = mcpResourceUrl(settings.publicBaseUrl);
    const store = new ArtifactStore(repository, (err) =>
      this.logger.warn(`sweep of expired authorization artifacts failed: ${(err as Error).message}`),
    );
    this.provider = new Provider(
      this.issuer,
      providerConfiguration({
        publicBaseUrl: settings.publicBaseUrl,
        resource: this.resource,
        jwtSecret: settings.jwtSecret,
        accessTokenSeconds: settings.mcpServer.accessTokenSeconds,
        refreshTokenDays: settings.mcpServer.refreshTokenDays,
        store,
        fetch: guardedFetch(http, { maxBytes: CLIENT_DOCUMENT_MAX_BYTES, timeoutMs: CLIENT_DOCUMENT_TIMEOUT_MS }),
      }),
    );
    // X-Forwarded-Proto decides whether its cookies are Secure, as TRUST_PROXY does for the API.
    this.provider.proxy = settings.trustProxy !== false;
    // Failures are logged by kind, never with the request's values; the client gets OAuth error JSON.
    this.provider.on('server_error', (_ctx: unknown, err: Error) => {
      this.logger.error(`authorization server failure: ${err.name}: ${err.message}`);
    });
    this.provider.on('error', (err: Error) => {
      this.logger.error(`authorization server failure: ${err.name}: ${err.message}`);
    });
  }

  /** The provider's request handler (Express mounts it; paths relative to the mount). */
  handler(): NodeHandler {
    const callback = this.provider.callback();
    // Koa answers every failure itself (OAuth error JSON); the promise only says the answer is sent.
    return (req, res) => {
      void callback(req, res);
    };
  }

  /** RFC 9728 protected-resource metadata of `{base}/mcp`. */
  protectedResourceMetadata(): Record<string, unknown> {
    return {
      resource: this.resource,
      authorization_servers: [this.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
    };
  }
}
