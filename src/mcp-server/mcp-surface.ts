import { Injectable } from '@nestjs/common';
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { readPackageVersion } from '../common/version.js';
import type { Scope } from '../workspaces/scope.js';
import type { McpPrincipal } from './mcp-bearer.js';
import { answering } from './mcp-errors.js';
import { McpSiteTools, type ProgressSink } from './mcp-site-tools.js';

/** How long MCP clients may keep a list (2026-07-28 cache hints): the vault and agents change rarely. */
const LIST_TTL_MS = 60_000;

type Notify = (notification: { method: string; params?: Record<string, unknown> }) => Promise<void>;

/** notifications/progress for the request's progressToken, when it sent one. */
export function progressSink(meta: Record<string, unknown> | undefined, notify: Notify): ProgressSink | undefined {
  const token = meta?.progressToken;
  if (typeof token !== 'string' && typeof token !== 'number') {
    return undefined;
  }
  return (progress) => {
    notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } }).catch(() => undefined);
  };
}

/**
 * What /mcp exposes to one caller: built for each request from the caller's scope (the SDK's factory),
 * so nothing outlives the request. Tools: the vault's site tools.
 */
@Injectable()
export class McpSurface {
  private readonly version = readPackageVersion();

  constructor(private readonly sites: McpSiteTools) {}

  server(principal: McpPrincipal, _era: 'legacy' | 'modern'): Server {
    const { scope } = principal;
    const server = new Server(
      { name: 'agentsite', title: 'agentsite', version: this.version },
      {
        capabilities: { tools: { listChanged: false } },
        instructions:
          'The tools of the sites in your agentsite vault, named <site>__<tool>, and your agents, named agent__<name>.',
        cacheHints: {
          'tools/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
        },
      },
    );
    server.setRequestHandler('tools/list', () =>
      answering(async () => ({ tools: (await this.siteTools(scope)).map((t) => t.listed) })),
    );
    server.setRequestHandler('tools/call', (request, ctx) =>
      answering(async () => {
        const { name, arguments: args } = request.params;
        const tool = (await this.siteTools(scope)).find((t) => t.listed.name === name);
        if (tool === undefined) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No tool named "${name}"`, {
            code: 'NOT_FOUND',
            statusCode: 404,
          });
        }
        const onProgress = progressSink(request.params._meta as Record<string, unknown> | undefined, (n) =>
          ctx.mcpReq.notify(n as never),
        );
        return (await this.sites.call(scope, tool, args, onProgress)) as never;
      }),
    );
    return server;
  }

  private siteTools(scope: Scope) {
    return this.sites.list(scope, new Set());
  }
}
