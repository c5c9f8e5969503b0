import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import type { RunResponse } from './run-response.js';
import { RunsService } from './runs.service.js';
import { TermsRequired } from '../auth/decorators.js';

@ApiTags('runs')
@ApiBearerAuth()
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's runs" })
@TermsRequired()
@Controller('runs')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Get(':id')
  @ApiOperation({
    summary:
      'A run with its timeline (its Temporal workflow history while it runs; once ended, the timeline the run archived)',
  })
  async get(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<RunResponse> {
    return this.runs.describe(await this.runs.findInScope(scope, id));
  }

  @Post(':id/cancel')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Cancel a queued or active run (RUN_NOT_CANCELLABLE once it ended)' })
  async cancel(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<RunResponse> {
    const run = await this.runs.findInScope(scope, id);
    requireRole(scope, 'member', 'Cancelling a run');
    return this.runs.cancel(run);
  }
}
