import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ToolCallFailure } from '../tools/tool-failure.js';
import { ToolCaller } from '../tools/tool-caller.js';
import { SiteEntity } from '../vault/site.entity.js';
import type { CallToolInput, CallToolOutput } from '../../workflows/contracts.js';

/** A run's tool call: the site as the run's owner has it, through the one ToolCaller. */
@Injectable()
export class RunToolsService {
  constructor(
    private readonly caller: ToolCaller,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async call(input: CallToolInput, idempotencyKey: string, signal: AbortSignal): Promise<CallToolOutput> {
    // The site id comes from the run's context, built from the agent's own scope at the start of the run.
    const site = await this.dataSource.getRepository(SiteEntity).findOneBy({ id: input.siteId });
    if (site === null) {
      throw new ToolCallFailure('not_found', `The site ${input.siteName} is no longer in the vault`);
    }
    return this.caller.call({ site, tool: input.tool, input: input.input, idempotencyKey, signal });
  }
}
