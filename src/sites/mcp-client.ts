import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Client, type FetchLike, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readPackageVersion } from '../common/version.js';
import { guardedFetch } from './mcp-fetch.js';
import type { McpChallenge } from './mcp-discovery.js';
import type { McpServerState, McpToolResult } from './mcp-state.js';
import {
  classify,
  ConnectFailure,
  listAll,
  type McpCallAnswer,
  observed,
  type OperationContext,
  operations,
  parseChallenge,
  unwrap,
} from './mcp-answers.js';
import type { McpServerInfo } from './mcp-tools.js';
import { SiteHttpClient } from './site-http.js';

export type { McpChallenge } from './mcp-discovery.js';
export { type McpCallAnswer, parseChallenge, retryAfterSeconds } from './mcp-answers.js';

/** The `_meta` key of the idempotency hint on `tools/call` (also sent as the POST's Idempotency-Key header). */
export const MCP_IDEMPOTENCY_META_KEY = 'io.agentsite/idempotency-key';
export const MCP_CALL_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 15_000;
/** A pooled connection (a legacy server's session) is closed after this long unused. */
const IDLE_MS = 60_000;

export type McpProbe =
  | {
      kind: 'listed';
      tools: unknown[];
      server: McpServerInfo | null;
      protocolVersion: string | null;
      /** The list's cache hint (SEP-2549 `ttlMs`), when it gave one. */
      ttlMs: number | null;
    }
  | { kind: 'unauthorized'; challenge: McpChallenge };

export interface McpCallRequest {
  /** The site row (its `mcp.endpoint`, else `url`, is where the call goes). */
  site: { id: string; url: string; mcp: McpServerState | null };
  token: string | null;
  tool: string;
  input: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

interface Connection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  timer?: NodeJS.Timeout;
}

/**
 * The service's MCP client, over the official SDK: Streamable HTTP through the guarded fetch, version
 * negotiation (`server/discover` for 2026-07-28, else the 2025 `initialize` handshake: 2025-11-25,
 * 2025-06-18), one pooled connection per endpoint and token (a legacy server's session lives there;
 * a session the server forgot is opened again once, transparently).
 */
@Injectable()
export class McpClient implements OnModuleDestroy {
  private readonly logger = new Logger('McpClient');
  private readonly fetchFn: FetchLike;
  private readonly pool = new Map<string, Promise<Connection>>();
  private readonly version = readPackageVersion();

  constructor(http: SiteHttpClient) {
    this.fetchFn = observed(guardedFetch(http, { timeoutMs: MCP_CALL_TIMEOUT_MS }));
  }

  async onModuleDestroy(): Promise<void> {
    const all = [...this.pool.values()];
    this.pool.clear();
    await Promise.all(all.map((c) => c.then((x) => this.close(x)).catch(() => undefined)));
  }

  /** The fetch the SDK's discovery functions use (guarded; the auth code passes it on). */
  get fetch(): FetchLike {
    return this.fetchFn;
  }

  /** Lists every tool (all pages) with `token` (or none); a 401/403 answers `unauthorized` with its challenge. */
  async probe(endpoint: string, token: string | null): Promise<McpProbe> {
    const context: OperationContext = {};
    return operations.run(context, async () => {
      let connection: Connection | undefined;
      try {
        connection = await this.connect(endpoint, token, PROBE_TIMEOUT_MS);
        const listed = await listAll(connection.client);
        const version = connection.client.getServerVersion();
        const instructions = connection.client.getInstructions();
        const ttl = (listed as { ttlMs?: unknown }).ttlMs;
        return {
          kind: 'listed' as const,
          tools: listed.tools,
          server: version
            ? { name: version.name, title: version.title, version: version.version, instructions }
            : instructions
              ? { name: '', version: '', instructions }
              : null,
          protocolVersion: connection.client.getNegotiatedProtocolVersion() ?? null,
          ttlMs: typeof ttl === 'number' && ttl > 0 ? ttl : null,
        };
      } catch (err) {
        const failure = err instanceof ConnectFailure ? err.failure : context.failure;
        if (failure !== undefined && (failure.status === 401 || failure.status === 403)) {
          return { kind: 'unauthorized' as const, challenge: parseChallenge(failure.status, failure.wwwAuthenticate) };
        }
        throw unwrap(err);
      } finally {
        if (connection !== undefined) {
          await this.close(connection);
        }
      }
    });
  }

  /** `tools/call`, with the idempotency hint in `_meta` and as a header; the answer classified. */
  async callTool(request: McpCallRequest): Promise<McpCallAnswer> {
    const endpoint = request.site.mcp?.endpoint ?? request.site.url;
    const timeoutMs = request.timeoutMs ?? MCP_CALL_TIMEOUT_MS;
    const key = `${endpoint}\n${createHash('sha256')
      .update(request.token ?? '')
      .digest('base64url')}`;
    for (let attempt = 0; ; attempt += 1) {
      const context: OperationContext = { idempotencyKey: request.idempotencyKey };
      try {
        return await operations.run(context, async () => {
          // A server that spoke a 2025 revision at its last listing is not probed with server/discover again.
          const legacy = request.site.mcp?.protocolVersion?.startsWith('2025-') === true;
          const connection = await this.pooled(key, endpoint, request.token, timeoutMs, legacy);
          const result = await connection.client.callTool(
            {
              name: request.tool,
              arguments: request.input as Record<string, unknown>,
              ...(request.idempotencyKey ? { _meta: { [MCP_IDEMPOTENCY_META_KEY]: request.idempotencyKey } } : {}),
            },
            {
              timeout: timeoutMs,
              signal: request.signal,
              ...(request.onProgress ? { onprogress: request.onProgress } : {}),
            },
          );
          this.touch(key, connection);
          const out: McpToolResult = { content: (result.content ?? []) as Array<Record<string, unknown>> };
          if (result.structuredContent !== undefined) {
            out.structuredContent = result.structuredContent as Record<string, unknown>;
          }
          return { kind: 'result' as const, result: out, isError: result.isError === true };
        });
      } catch (err) {
        const failure = err instanceof ConnectFailure ? err.failure : context.failure;
        if (failure !== undefined || !(err instanceof ProtocolError)) {
          this.drop(key); // the connection is suspect: the next call opens a new one
        }
        if (failure?.status === 404 && failure.sentSession && attempt === 0) {
          this.logger.log(`MCP session at ${new URL(endpoint).host} was forgotten by the server; opening a new one`);
          continue;
        }
        return classify(err, failure);
      }
    }
  }

  private pooled(
    key: string,
    endpoint: string,
    token: string | null,
    timeoutMs: number,
    legacy: boolean,
  ): Promise<Connection> {
    let connection = this.pool.get(key);
    if (connection === undefined) {
      connection = this.connect(endpoint, token, timeoutMs, legacy);
      this.pool.set(key, connection);
      connection.catch(() => {
        if (this.pool.get(key) === connection) {
          this.pool.delete(key);
        }
      });
    }
    return connection;
  }

  private touch(key: string, connection: Connection): void {
    clearTimeout(connection.timer);
    connection.timer = setTimeout(() => this.drop(key), IDLE_MS);
    connection.timer.unref();
  }

  private drop(key: string): void {
    const connection = this.pool.get(key);
    this.pool.delete(key);
    void connection?.then((c) => this.close(c)).catch(() => undefined);
  }

  private async close(connection: Connection): Promise<void> {
    clearTimeout(connection.timer);
    await connection.client.close().catch(() => undefined);
  }

  private async connect(
    endpoint: string,
    token: string | null,
    timeoutMs: number,
    legacy = false,
  ): Promise<Connection> {
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
      fetch: this.fetchFn,
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : undefined,
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const client = new Client(
      { name: 'agentsite', version: this.version },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    // The transport's background GET stream (server-initiated messages) may fail; nothing waits on it.
    client.onerror = () => undefined;
    const context = operations.getStore();
    try {
      await client.connect(transport, {
        timeout: timeoutMs,
        ...(legacy ? { prior: { kind: 'legacy' as const } } : {}),
      });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw new ConnectFailure(context?.failure, err);
    }
    return { client, transport };
  }
}
