import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { createMcpHandler, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { AppError } from '../common/app-error.js';
import { writeAppError, writeUnexpectedError } from '../common/error-filter.js';
import { type NodeMiddleware, type NodeRequest, type NodeResponse, pathOf } from '../common/http.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { mcpProtectedResourceMetadataUrl } from './caller.js';
import { McpBearer, type McpPrincipal, McpUnauthorized } from './mcp-bearer.js';
import { McpSurface } from './mcp-surface.js';

/** The endpoint's path, outside the /api prefix (mounted by createApp before the API's body parsers). */
export const MCP_PATH = '/mcp';

/** Largest JSON-RPC body /mcp reads (as the API's own limit): a larger one is answered 413, never parsed. */
export const MCP_MAX_BODY_BYTES = 256 * 1024;

const PRINCIPAL = 'agentsitePrincipal';

function principalOf(auth: AuthInfo | undefined): McpPrincipal {
  const principal = auth?.extra?.[PRINCIPAL] as McpPrincipal | undefined;
  if (principal === undefined) {
    // Every request reaching the SDK went through the bearer check first.
    throw new Error('MCP request without a principal');
  }
  return principal;
}

/**
 * agentsite's own MCP endpoint: Streamable HTTP, stateless (a fresh server per request from the
 * caller's scope, nothing kept in memory between requests, so any API process answers any request),
 * the 2026-07-28 revision and, through the SDK's stateless legacy fallback, 2025-11-25 and 2025-06-18
 * clients (`initialize`). The bearer check comes first: without a token it serves takes, 401 with the
 * challenge pointing at the protected-resource metadata (RFC 9728).
 */
@Injectable()
export class McpEndpoint implements OnApplicationShutdown {
  private readonly logger = new Logger('McpEndpoint');
  private readonly handler: McpHttpHandler;
  private readonly node: ReturnType<typeof toNodeHandler>;
  private readonly challenge: string;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly bearer: McpBearer,
    surface: McpSurface,
  ) {
    this.challenge = `Bearer resource_metadata="${mcpProtectedResourceMetadataUrl(settings.publicBaseUrl)}"`;
    const onerror = (error: Error): void => this.logger.debug(`request refused: ${error.message}`);
    this.handler = createMcpHandler((ctx) => surface.server(principalOf(ctx.authInfo), ctx.era), {
      legacy: 'stateless',
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
      onerror,
    });
    this.node = toNodeHandler(this.handler, { maxRequestBodySize: MCP_MAX_BODY_BYTES, onerror });
  }

  /** The middleware for MCP_PATH (mounted with app.use: `req.url` is what follows /mcp). */
  middleware(): NodeMiddleware {
    return (req, res, next) => {
      if (pathOf(req) !== '/' || req.method === 'OPTIONS') {
        // /mcp/anything is no route (the app's NOT_FOUND); preflights go to CORS, which refuses them.
        next();
        return;
      }
      this.serve(req, res).catch((err: unknown) => this.failed(req, res, err));
    };
  }

  private async serve(req: NodeRequest, res: NodeResponse): Promise<void> {
    let principal: McpPrincipal;
    try {
      principal = await this.bearer.authenticate(req);
    } catch (err) {
      this.refuse(res, err);
      return;
    }
    if (principal.scope.user.acceptedTermsAt === null) {
      writeAppError(res, new AppError('TERMS_NOT_ACCEPTED', 'Accept the terms of service in the console first'));
      return;
    }
    const auth: AuthInfo = {
      token: 'redacted',
      clientId: principal.caller.clientId ?? 'agentsite-api-token',
      scopes: principal.caller.scopes,
      expiresAt: Math.floor(principal.caller.expiresAt.getTime() / 1000),
      extra: { [PRINCIPAL]: principal },
    };
    (req as NodeRequest & { auth?: AuthInfo }).auth = auth;
    await this.node(req, res);
  }

  private refuse(res: NodeResponse, err: unknown): void {
    if (err instanceof McpUnauthorized) {
      res.setHeader(
        'WWW-Authenticate',
        err.tokenSent ? `${this.challenge}, error="invalid_token", error_description="${err.message}"` : this.challenge,
      );
      writeAppError(res, new AppError(err.tokenSent ? 'INVALID_TOKEN' : 'UNAUTHORIZED', err.message));
      return;
    }
    if (err instanceof AppError) {
      writeAppError(res, err);
      return;
    }
    throw err;
  }

  /** An unexpected failure (the database down during the bearer check): the API's logged 500. */
  private failed(req: NodeRequest, res: NodeResponse, err: unknown): void {
    if (res.headersSent) {
      this.logger.warn(`request failed after its answer started: ${err instanceof Error ? err.name : typeof err}`);
      res.end();
      return;
    }
    writeUnexpectedError(req, res, err, this.logger);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.handler.close();
  }
}
