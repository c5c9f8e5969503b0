import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { assertStoredManifestUsable, type ManifestTool } from '../sites/manifest.js';
import { validateToolInput } from '../sites/tool-input.js';
import { publicNetworkMessage, SiteHttpClient, SiteNetworkError } from '../sites/site-http.js';
import { TokenRefreshService } from '../oauth/token-refresh.service.js';
import { CredentialsService } from '../vault/credentials.service.js';
import type { SiteEntity } from '../vault/site.entity.js';
import type { CredentialEntity } from '../vault/credential.entity.js';
import { networkFailureKind, notConnected, ToolCallFailure } from '../sites/tool-failure.js';
import { CredentialRefusals } from './credential-refusals.js';
import { McpToolCaller } from './mcp-tool-caller.js';
import { OUTGOING_WINDOW_SECONDS, OutgoingLimits, outgoingKey } from './outgoing-limits.js';
import { parseRetryAfter } from './retry-after.js';

export const TOOL_CALL_TIMEOUT_MS = 30_000;

export interface ToolCallRequest {
  site: SiteEntity;
  /** The site's credential row when the caller read it with the site (saves a round trip); null: none. */
  credential?: CredentialEntity | null;
  tool: string;
  input: unknown;
  /** Sent as Idempotency-Key, so a retried call has one effect at the site. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * Runs wait out a site's 429 on a durable timer: a longer Retry-After than this fails the call
   * instead (TOOL_EXECUTION_ERROR). Unset (chat, direct calls): the 429 is answered with the site's wait.
   */
  maxRetryAfterSeconds?: number;
  /** MCP tools: the server's progress notifications while the call runs. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export interface ToolCallResult {
  result: unknown;
  durationMs: number;
  /** Whether the access token had to be refreshed during this call. */
  refreshed: boolean;
}

/** Each stored manifest object's domain: the site cache hands every call the same object. */
const domains = new WeakMap<SiteEntity['manifest'], string>();

/**
 * The domain of a site's calls, its tool server's host: the outgoing limit's key and the metrics'
 * label ('invalid' when the URL does not parse, which the manifest check refuses before any call).
 */
function domainOf(site: SiteEntity): string {
  let domain = domains.get(site.manifest);
  if (domain === undefined) {
    try {
      domain = outgoingKey(site.manifest.server.url);
    } catch {
      domain = 'invalid';
    }
    domains.set(site.manifest, domain);
  }
  return domain;
}

/**
 * The one way the service calls a site's tool (direct-call route, chat, agent activities): input
 * checked against the tool's input_schema, the outgoing limit counted in PostgreSQL across all
 * processes, the credential from the vault (refreshed when needed, and once on a 401), the HTTPS
 * POST through the SSRF guard, and the answer classified into the specification's codes.
 */
@Injectable()
export class ToolCaller {
  private readonly logger = new Logger('ToolCaller');
  private readonly refusals = new CredentialRefusals();

  constructor(
    private readonly http: SiteHttpClient,
    private readonly credentials: CredentialsService,
    private readonly tokens: TokenRefreshService,
    private readonly limits: OutgoingLimits,
    private readonly metrics: MetricsService,
    private readonly mcp: McpToolCaller,
  ) {}

  findTool(site: SiteEntity, name: string): ManifestTool {
    const tool = site.manifest.tools.find((t) => t.name === name);
    if (tool === undefined && site.protocol === 'mcp' && site.manifest.tools.length === 0) {
      // needs_connection: the server lists its tools only once a credential works.
      throw notConnected(site.manifest.name);
    }
    if (tool === undefined) {
      throw new AppError('NOT_FOUND', `${site.manifest.name} has no tool named "${name}"`);
    }
    return tool;
  }

  /** A tool call, timed by site domain and outcome (`ok`, the failure's kind, or its code in lower case). */
  async call(request: ToolCallRequest): Promise<ToolCallResult> {
    const started = performance.now();
    let outcome = 'ok';
    try {
      return await this.send(request);
    } catch (err) {
      outcome = err instanceof ToolCallFailure ? err.kind : err instanceof AppError ? err.code.toLowerCase() : 'error';
      throw err;
    } finally {
      this.metrics.toolCallDuration.observe(
        { domain: this.metrics.domainLabel(domainOf(request.site)), outcome },
        (performance.now() - started) / 1000,
      );
    }
  }

  private async send(request: ToolCallRequest): Promise<ToolCallResult> {
    const { site } = request;
    const tool = this.findTool(site, request.tool);
    if (site.protocol === 'mcp') {
      return this.sendMcp(request, tool);
    }
    validateToolInput(tool, request.input);
    assertStoredManifestUsable(site.manifest, site.url);
    const endpoint = `${site.manifest.server.url.replace(/\/+$/, '')}/tools/${encodeURIComponent(tool.name)}`;
    const started = performance.now();
    // Only a call that will be sent takes an outgoing slot: input, credential presence and status are
    // checked first, so failing calls cannot spend a domain's budget. The slot comes before a refresh,
    // so a refused call never touches the token endpoint either.
    const stored = await this.credentials.usableRow(site, request.credential);
    // A credential the site keeps refusing is not sent again (nor counted) until it changes.
    this.refusals.assertNotHeld(site, stored);
    // The call's endpoint is on the tool server: its host is this key (outgoingKey), parsed once per manifest.
    await this.limits.take(site, domainOf(site));
    let credential = await this.tokens.tokenFor(site, undefined, stored);
    let refreshed = false;
    let response = await this.post(endpoint, credential.token, request);
    if (response.status === 401 && credential.kind === 'oauth2') {
      // Once: the token may have expired early or been rotated by another process.
      credential = await this.tokens.tokenFor(site, credential.generation);
      refreshed = true;
      response = await this.post(endpoint, credential.token, request);
    }
    this.refusals.record(stored.id, credential.generation, response.status);
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    return { result: classify(response, site, tool.name, request.maxRetryAfterSeconds), durationMs, refreshed };
  }

  /** An MCP server's tool: the result is `{content, structuredContent?}` as the server sent it. */
  private async sendMcp(request: ToolCallRequest, tool: ManifestTool): Promise<ToolCallResult> {
    const started = performance.now();
    const { result, refreshed } = await this.mcp.call(
      { ...request, tool },
      domainOf(request.site),
      this.refusals,
      request.credential,
    );
    return { result, durationMs: Math.round((performance.now() - started) * 10) / 10, refreshed };
  }

  private async post(endpoint: string, token: string, request: ToolCallRequest) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (request.idempotencyKey !== undefined) {
      headers['idempotency-key'] = request.idempotencyKey;
    }
    try {
      return await this.http.request({
        method: 'POST',
        url: endpoint,
        headers,
        body: JSON.stringify(request.input ?? {}),
        signal: request.signal,
        timeoutMs: request.timeoutMs ?? TOOL_CALL_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof SiteNetworkError) {
        const kind = networkFailureKind(err);
        // The socket's own error (addresses, ports, TLS internals) is for the log; users get its gist.
        this.logger.warn(`tool call to ${outgoingKey(endpoint)} failed: ${err.message}`);
        throw new ToolCallFailure(
          kind,
          `Tool call to ${request.site.manifest.name} failed: ${publicNetworkMessage(err)}`,
        );
      }
      throw err;
    }
  }
}

function siteMessage(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

/** Maps the site's answer onto a result or a ToolCallFailure with the site's own `error` message. */
function classify(
  response: { status: number; headers: Record<string, string>; body: Buffer },
  site: SiteEntity,
  tool: string,
  maxRetryAfterSeconds: number | undefined,
): unknown {
  const name = site.manifest.name;
  const message = siteMessage(response.body);
  const said = message === undefined ? '' : `: ${message}`;
  if (response.status >= 200 && response.status < 300) {
    try {
      return JSON.parse(response.body.toString('utf8')) as unknown;
    } catch {
      throw new ToolCallFailure('invalid_response', `${name} answered ${tool} with a body that is not JSON`);
    }
  }
  switch (response.status) {
    case 401:
      throw new ToolCallFailure('unauthorized', `${name} refused the credential (401)${said}`);
    case 403:
      throw new ToolCallFailure('forbidden', `${name} denied ${tool} (403)${said}`);
    case 404:
      throw new ToolCallFailure('not_found', `${name} answered 404 for ${tool}${said}`);
    case 429: {
      const retryAfter = parseRetryAfter(response.headers['retry-after']);
      if (retryAfter !== undefined && maxRetryAfterSeconds !== undefined && retryAfter > maxRetryAfterSeconds) {
        // Waiting that long would park the agent's whole queue: fail the call, let the model go on.
        throw new ToolCallFailure(
          'wait_too_long',
          `${name} asked to wait ${retryAfter} s before calling ${tool} again (429), over the ${maxRetryAfterSeconds} s cap; not waiting${said}`,
        );
      }
      throw new ToolCallFailure(
        'rate_limited',
        `${name} is rate limiting calls (429)${said}`,
        retryAfter ?? OUTGOING_WINDOW_SECONDS,
      );
    }
    default:
      if (response.status >= 500) {
        throw new ToolCallFailure('server_error', `${name} failed (${response.status})${said}`);
      }
      throw new ToolCallFailure('bad_request', `${name} rejected ${tool} (${response.status})${said}`);
  }
}
