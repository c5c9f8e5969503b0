import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { ToolCallFailure } from '../sites/tool-failure.js';
import { ToolCaller } from '../tools/tool-caller.js';
import type { CredentialEntity } from '../vault/credential.entity.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { keptResult } from './run-tools.js';
import { RunExecutionRepository } from './run-execution.repository.js';
import { type CallToolInput, type CallToolOutput, MAX_DURABLE_WAIT_SECONDS } from '../../workflows/contracts.js';

/** A run's tool call: the site as the run's owner has it, through the one ToolCaller. */
@Injectable()
export class RunToolsService {
  private readonly logger = new Logger('RunTools');

  constructor(
    private readonly caller: ToolCaller,
    private readonly execution: RunExecutionRepository,
  ) {}

  async call(input: CallToolInput, idempotencyKey: string, signal: AbortSignal): Promise<CallToolOutput> {
    const { site, credential } = await this.ownedSite(input);
    const { result, durationMs, refreshed } = await this.caller.call({
      site,
      credential,
      tool: input.tool,
      input: input.input,
      idempotencyKey,
      signal,
      maxRetryAfterSeconds: MAX_DURABLE_WAIT_SECONDS,
    });
    return { ...keptResult(result, site.protocol), durationMs, refreshed };
  }

  /**
   * The activity's input is not trusted: anything that can put a task on the queue could name any
   * site. The run must exist, belong to the user the input names and be active; the site must be one
   * of its agent's sites (site_ids) and in the vault of the agent (its workspace's, or its owner's);
   * else PERMISSION_DENIED (non-retryable), and no credential is read. One round trip: the site, each
   * of those conditions (the refusal logs which one failed) and, when they hold, the credential.
   */
  private async ownedSite(input: CallToolInput): Promise<{ site: SiteEntity; credential: CredentialEntity | null }> {
    if (![input.siteId, input.runId, input.userId].every((id) => typeof id === 'string' && UUID.test(id))) {
      throw this.refused(input, 'malformed ids');
    }
    const { site, found, credential } = await this.execution.siteForToolCall(input);
    if (site === undefined) {
      throw new ToolCallFailure('not_found', `The site ${input.siteName} is no longer in the vault`);
    }
    if (found?.run_status === null || found?.run_status === undefined) {
      throw this.refused(input, 'no run of this user');
    }
    if (found.run_status !== 'active') {
      throw this.refused(input, `the run is ${found.run_status}, not active`);
    }
    if (found.owned !== true) {
      throw this.refused(input, 'the site is not in the vault of the run’s agent');
    }
    if (found.listed !== true) {
      throw this.refused(input, 'the site is not one of the run’s agent’s sites');
    }
    return { site, credential };
  }

  private refused(input: CallToolInput, why: string): AppError {
    // Ids only: enough for an operator to find the forged task in the Temporal UI.
    this.logger.warn(`tool call refused for run ${String(input.runId)}, site ${String(input.siteId)}: ${why}`);
    return new AppError('PERMISSION_DENIED', `The run may not use the site ${String(input.siteName)}`);
  }
}
