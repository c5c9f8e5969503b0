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
    // The origin of every request it sees is the issuer's (see handler): set there, then trusted here.
    this.provider.proxy = true;
    // Failures are logged by kind, never with the request's values; the client gets OAuth error JSON.
    this.provider.on('server_error', (_ctx: unknown, err: Error) => {
      this.logger.error(`authorization server failure: ${err.name}: ${err.message}`);
    });
    this.provider.on('error', (err: Error) => {
      this.logger.error(`authorization server failure: ${err.name}: ${err.message}`);
    });
    // A grant the provider revokes itself (a replayed refresh token, a client's revocation) ends its
    // connected app: the account page lists only apps that can still act.
    this.provider.on('grant.revoked', (_ctx: unknown, grantId: string) => {
      repository
        .findConnectedAppByGrant(grantId)
        .then((app) => (app === null ? undefined : repository.deleteConnectedApp(app.id)))
        .catch((err: unknown) => this.logger.warn(`removing a revoked grant's app failed: ${(err as Error).message}`));
    });
  }

  /**
   * The provider's request handler (Express mounts it; paths relative to the mount). Every URL it
   * builds (its metadata's endpoints, the consent's resume) comes from the request's origin: it is
   * pinned to the issuer's, whatever Host or X-Forwarded-* the request carried, so the documents
   * always name PUBLIC_BASE_URL, and its cookies are Secure exactly when the issuer is https.
   */
  handler(): NodeHandler {
    const callback = this.provider.callback();
    const issuer = new URL(this.issuer);
    // Koa answers every failure itself (OAuth error JSON); the promise only says the answer is sent.
    return (req, res) => {
      req.headers.host = issuer.host;
      req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
      delete req.headers['x-forwarded-host'];
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
