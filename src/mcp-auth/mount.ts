import type { INestApplication } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { addressKey } from '../common/client-address.js';
import { writeAppError } from '../common/error-filter.js';
import { type Next, type NodeRequest, type NodeResponse, sendJson } from '../common/http.js';
import { ApiRateLimits, consumeOrThrow } from '../common/rate-limit.js';
import { mcpProtectedResourceMetadataUrl } from '../mcp-server/caller.js';
import { MCP_OAUTH_PATH, McpAuthorizationServer } from './authorization-server.js';

/** Only the path itself (a query allowed), not what lies below it. */
const exactly = (req: NodeRequest): boolean => req.url === '/' || req.url === '' || req.url?.startsWith('/?') === true;

/** Browser-based MCP clients read the metadata from any origin: public documents, no credentials. */
function openCors(res: NodeResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'MCP-Protocol-Version');
  res.setHeader('Access-Control-Max-Age', '600');
}

/**
 * Mounts the authorization server for MCP clients (called by app.factory.ts before the API's body
 * parsers: oidc-provider reads its own bodies):
 * - oidc-provider at /mcp-oauth (its issuer `{PUBLIC_BASE_URL}/mcp-oauth`);
 * - its metadata also at /.well-known/oauth-authorization-server/mcp-oauth (RFC 8414 path
 *   insertion, which MCP clients try first) and /.well-known/openid-configuration/mcp-oauth;
 * - the protected-resource metadata of /mcp (RFC 9728) at mcpProtectedResourceMetadataUrl.
 * Requests to /mcp-oauth count against the address's API limit (429 RATE_LIMITED past it).
 * The provider answers CORS itself (any origin on its metadata, token, registration and revocation
 * endpoints: they take no cookie); the documents here answer `Access-Control-Allow-Origin: *`.
 */
export function mountMcpAuthorizationServer(app: INestApplication, publicBaseUrl: string): void {
  const server = app.get(McpAuthorizationServer);
  const handler = server.handler();
  for (const document of ['oauth-authorization-server', 'openid-configuration']) {
    app.use(`/.well-known/${document}${MCP_OAUTH_PATH}`, (req: NodeRequest, res: NodeResponse, next: Next) => {
      if (!exactly(req)) {
        next();
        return;
      }
      // As if asked at /mcp-oauth/.well-known/…: oidc-provider builds its endpoints' URLs from the mount.
      const url = req.url ?? '/';
      const query = url.includes('?') ? url.slice(url.indexOf('?')) : '';
      req.url = `/.well-known/${document}${query}`;
      req.originalUrl = `${MCP_OAUTH_PATH}${req.url}`;
      handler(req, res);
    });
  }
  const resourceMetadataPath = new URL(mcpProtectedResourceMetadataUrl(publicBaseUrl)).pathname;
  app.use(resourceMetadataPath, (req: NodeRequest, res: NodeResponse, next: Next) => {
    if (!exactly(req) || !['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? '')) {
      next();
      return;
    }
    openCors(res);
    if (req.method === 'OPTIONS') {
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader('Cache-Control', 'public, max-age=300');
    sendJson(res, 200, server.protectedResourceMetadata());
  });
  // Its endpoints count against the address's budget of the API (RATE_LIMIT_PER_IP): registration
  // is open to anyone, and each registered client is a row.
  const limits = app.get(ApiRateLimits);
  app.use(MCP_OAUTH_PATH, (req: NodeRequest, res: NodeResponse, next: Next) => {
    consumeOrThrow(limits.perIp, addressKey(req.ip), 'RATE_LIMITED', 'Too many requests from this address').then(
      () => handler(req, res),
      (err: unknown) => (err instanceof AppError ? writeAppError(res, err) : next(err)),
    );
  });
}
