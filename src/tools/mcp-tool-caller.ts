import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import type { ManifestTool } from '../sites/manifest.js';
import { type McpCallAnswer, McpClient } from '../sites/mcp-client.js';
import type { McpToolResult } from '../sites/mcp-state.js';
import { publicNetworkMessage, SiteNetworkError } from '../sites/site-http.js';
import { networkFailureKind, ToolCallFailure } from '../sites/tool-failure.js';
import { TokenRefreshService } from '../oauth/token-refresh.service.js';
import { CredentialsService } from '../vault/credentials.service.js';
import { McpSites } from '../vault/mcp-sites.service.js';
import type { CredentialEntity } from '../vault/credential.entity.js';
import type { SiteEntity } from '../vault/site.entity.js';
import type { CredentialRefusals } from './credential-refusals.js';
import { validateMcpInput } from './mcp-input.js';
import { OUTGOING_WINDOW_SECONDS, OutgoingLimits } from './outgoing-limits.js';

/** The text content of a result, for an error message (cut to 500 characters). */
function textOf(result: McpToolResult): string {
  const text = result.content
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join(' ')
    .trim();
  return text === '' ? 'no message' : text.slice(0, 500);
}

export interface McpToolCall {
  site: SiteEntity;
  tool: ManifestTool;
  input: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetryAfterSeconds?: number;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/**
 * ToolCaller's MCP branch: the same checks and limits as a site call, the call made by the MCP client,
 * and the answer in the specification's codes. The credential is optional: a server that listed its
 * tools without asking for one is called without an Authorization header.
 */
@Injectable()
export class McpToolCaller {
  private readonly logger = new Logger('McpToolCaller');

  constructor(
    private readonly client: McpClient,
    private readonly credentials: CredentialsService,
    private readonly tokens: TokenRefreshService,
    private readonly limits: OutgoingLimits,
    sites: McpSites,
  ) {
    // Listing an MCP server's tools again (refresh) uses a refreshed OAuth token, as calls do.
    sites.useTokenSource(async (site) => (await tokens.tokenFor(site)).token);
  }

  async call(
    call: McpToolCall,
    domain: string,
    refusals: CredentialRefusals,
    prefetched: CredentialEntity | null | undefined,
  ): Promise<{ result: McpToolResult; refreshed: boolean }> {
    const { site, tool } = call;
    validateMcpInput(tool, call.input);
    const row = prefetched !== undefined ? prefetched : await this.credentials.findForSite(site.id);
    const stored = row === null ? null : await this.credentials.usableRow(site, row);
    if (stored !== null) {
      refusals.assertNotHeld(site, stored);
    }
    await this.limits.take(site, domain);
    let credential = stored === null ? null : await this.tokens.tokenFor(site, undefined, stored);
    let refreshed = false;
    let answer = await this.send(call, credential?.token ?? null);
    if (answer.kind === 'unauthorized' && credential?.kind === 'oauth2') {
      // Once: the token may have expired early or been rotated by another process.
      credential = await this.tokens.tokenFor(site, credential.generation);
      refreshed = true;
      answer = await this.send(call, credential.token);
    }
    if (stored !== null && credential !== null) {
      const status = answer.kind === 'unauthorized' ? 401 : answer.kind === 'forbidden' ? 403 : 200;
      refusals.record(stored.id, credential.generation, status);
    }
    return { result: await this.outcome(answer, call), refreshed };
  }

  private async send(call: McpToolCall, token: string | null): Promise<McpCallAnswer> {
    const name = call.site.manifest.name;
    try {
      return await this.client.callTool({
        site: call.site,
        token,
        tool: call.tool.name,
        input: call.input ?? {},
        idempotencyKey: call.idempotencyKey,
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        onProgress: call.onProgress,
      });
    } catch (err) {
      if (err instanceof SiteNetworkError) {
        this.logger.warn(`MCP call to ${new URL(call.site.manifest.server.url).host} failed: ${err.message}`);
        const kind = networkFailureKind(err);
        throw new ToolCallFailure(kind, `Tool call to ${name} failed: ${publicNetworkMessage(err)}`);
      }
      if (err instanceof AppError) {
        throw new ToolCallFailure('network', `Tool call to ${name} failed: ${err.message}`);
      }
      this.logger.warn(`MCP call to ${name} failed: ${(err as Error)?.message ?? String(err)}`);
      throw new ToolCallFailure('invalid_response', `${name} did not answer ${call.tool.name} as an MCP server does`);
    }
  }

  private async outcome(answer: McpCallAnswer, call: McpToolCall): Promise<McpToolResult> {
    const name = call.site.manifest.name;
    const tool = call.tool.name;
    switch (answer.kind) {
      case 'result':
        if (answer.isError) {
          throw new ToolCallFailure('bad_request', `${name} answered ${tool} with an error: ${textOf(answer.result)}`);
        }
        return answer.result;
      case 'rpc_error':
        throw new ToolCallFailure('bad_request', `${name} refused ${tool}: ${answer.message.slice(0, 500)}`);
      case 'unauthorized':
        throw new ToolCallFailure('unauthorized', `${name} refused the credential (401)`);
      case 'forbidden': {
        const scope = answer.challenge.scope;
        if (answer.challenge.error === 'insufficient_scope' && scope !== null) {
          await this.credentials.setRequiredScope(call.site.id, scope);
          throw new ToolCallFailure(
            'forbidden',
            `${name} needs the scope "${scope}" for ${tool}: connect it again to grant it`,
          );
        }
        throw new ToolCallFailure('forbidden', `${name} denied ${tool} (403)`);
      }
      case 'rate_limited': {
        const retryAfter = answer.retryAfterSeconds ?? undefined;
        if (
          retryAfter !== undefined &&
          call.maxRetryAfterSeconds !== undefined &&
          retryAfter > call.maxRetryAfterSeconds
        ) {
          throw new ToolCallFailure(
            'wait_too_long',
            `${name} asked to wait ${retryAfter} s before calling ${tool} again (429), over the ${call.maxRetryAfterSeconds} s cap; not waiting`,
          );
        }
        throw new ToolCallFailure(
          'rate_limited',
          `${name} is rate limiting calls (429)`,
          retryAfter ?? OUTGOING_WINDOW_SECONDS,
        );
      }
      case 'http_error':
        if (answer.status >= 500) {
          throw new ToolCallFailure('server_error', `${name} failed (${answer.status})`);
        }
        throw new ToolCallFailure(
          answer.status === 404 ? 'not_found' : 'bad_request',
          `${name} rejected ${tool} (${answer.status})`,
        );
    }
  }
}
