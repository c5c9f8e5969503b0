import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Client,
  extractWWWAuthenticateParams,
  type FetchLike,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type StandardSchemaV1,
} from '@modelcontextprotocol/client';
import type { McpChallenge } from './mcp-discovery.js';
import type { McpToolResult } from './mcp-state.js';
import { SiteNetworkError } from './site-http.js';

// The MCP client's plumbing around the SDK: what the HTTP layer saw of an operation (status, challenge,
// Retry-After; the SDK's errors carry no headers), the tool listing, and a failed call's classification.

const PROBE_TIMEOUT_MS = 15_000;

export type McpCallAnswer =
  | { kind: 'result'; result: McpToolResult; isError: boolean }
  | { kind: 'unauthorized'; challenge: McpChallenge }
  | { kind: 'forbidden'; challenge: McpChallenge }
  | { kind: 'rate_limited'; retryAfterSeconds: number | null }
  /** A JSON-RPC error answer (unknown tool, invalid params, the server's own failure). */
  | { kind: 'rpc_error'; code: number; message: string }
  /** Any other HTTP failure of the server (5xx, 404 without a session, …). */
  | { kind: 'http_error'; status: number; message: string };

/** What the HTTP layer saw of the last failed request made for one operation. */
export interface Failure {
  status: number;
  wwwAuthenticate: string | null;
  retryAfter: string | null;
  sentSession: boolean;
}

export interface OperationContext {
  idempotencyKey?: string;
  failure?: Failure;
}

/** Thrown for a failed connect, with what the HTTP layer saw. */
export class ConnectFailure extends Error {
  constructor(
    readonly failure: Failure | undefined,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

export const operations = new AsyncLocalStorage<OperationContext>();

/** `fetchFn` that records the failures of the current operation and sends its Idempotency-Key. */
export function observed(base: FetchLike): FetchLike {
  return async (url, init) => {
    const context = operations.getStore();
    let request = init;
    // Only on the POST that carries the tools/call (not on a handshake made for it).
    const toolCall = typeof init?.body === 'string' && init.body.includes('"method":"tools/call"');
    if (context?.idempotencyKey !== undefined && toolCall) {
      const headers = new Headers(init?.headers);
      headers.set('idempotency-key', context.idempotencyKey);
      request = { ...init, headers };
    }
    const response = await base(url, request);
    if (!response.ok && context !== undefined) {
      context.failure = {
        status: response.status,
        wwwAuthenticate: response.headers.get('www-authenticate'),
        retryAfter: response.headers.get('retry-after'),
        sentSession: new Headers(request?.headers).has('mcp-session-id'),
      };
    }
    return response;
  };
}

export function parseChallenge(status: number, header: string | null): McpChallenge {
  const params = header
    ? extractWWWAuthenticateParams(new Response(null, { headers: { 'www-authenticate': header } }))
    : {};
  return {
    status,
    resourceMetadataUrl: params.resourceMetadataUrl?.toString() ?? null,
    scope: params.scope ?? null,
    error: params.error ?? null,
  };
}

/** Retry-After in seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null) {
    return null;
  }
  if (/^\d+$/.test(value.trim())) {
    return Number(value.trim());
  }
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Pages of `tools/list` walked at most. */
const MAX_PAGES = 64;

/**
 * A `tools/list` page as the server sent it: only its shape is checked here (an object with a `tools`
 * array), so a list that breaks the rules for tools reaches mapMcpTools, which names what is wrong,
 * instead of failing inside the SDK's own result schema.
 */
const LIST_PAGE: StandardSchemaV1<unknown, { tools: unknown[]; nextCursor?: string; ttlMs?: number }> = {
  '~standard': {
    version: 1,
    vendor: 'agentsite',
    validate: (value) => {
      const page = value as { tools?: unknown; nextCursor?: unknown } | null;
      if (typeof page !== 'object' || page === null || !Array.isArray(page.tools)) {
        return { issues: [{ message: 'tools/list did not answer a list of tools' }] };
      }
      if (page.nextCursor !== undefined && typeof page.nextCursor !== 'string') {
        return { issues: [{ message: 'nextCursor is not a string' }] };
      }
      return { value: page as { tools: unknown[]; nextCursor?: string; ttlMs?: number } };
    },
  },
};

/** Every page of `tools/list` (the SDK frames each request; the pages are joined here). */
export async function listAll(client: Client): Promise<{ tools: unknown[]; ttlMs?: number }> {
  const tools: unknown[] = [];
  let cursor: string | undefined;
  let ttlMs: number | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      LIST_PAGE,
      { timeout: PROBE_TIMEOUT_MS },
    );
    tools.push(...answer.tools);
    ttlMs ??= answer.ttlMs;
    if (answer.nextCursor === undefined || answer.nextCursor === '') {
      return { tools, ttlMs };
    }
    cursor = answer.nextCursor;
  }
  throw new SdkError(SdkErrorCode.ListPaginationExceeded, `tools/list went on for more than ${MAX_PAGES} pages`);
}

export function unwrap(err: unknown): unknown {
  return err instanceof ConnectFailure ? unwrap(err.cause) : err;
}

/** A failed call in the kinds ToolCaller answers; network failures and refused addresses are thrown. */
export function classify(err: unknown, failure: Failure | undefined): McpCallAnswer {
  const cause = unwrap(err);
  if (failure?.status === 401) {
    return { kind: 'unauthorized', challenge: parseChallenge(401, failure.wwwAuthenticate) };
  }
  if (failure?.status === 403) {
    return { kind: 'forbidden', challenge: parseChallenge(403, failure.wwwAuthenticate) };
  }
  if (failure?.status === 429) {
    return { kind: 'rate_limited', retryAfterSeconds: retryAfterSeconds(failure.retryAfter) };
  }
  if (cause instanceof ProtocolError) {
    return { kind: 'rpc_error', code: cause.code, message: cause.message };
  }
  if (failure !== undefined) {
    return { kind: 'http_error', status: failure.status, message: `the MCP server answered HTTP ${failure.status}` };
  }
  if (cause instanceof SdkError && cause.code === SdkErrorCode.RequestTimeout) {
    throw new SiteNetworkError('the MCP server did not answer in time', 'timeout', { cause });
  }
  const inner = (cause as { cause?: unknown } | null)?.cause;
  if (inner instanceof Error && !(cause instanceof SiteNetworkError)) {
    throw unwrap(inner);
  }
  throw cause;
}
