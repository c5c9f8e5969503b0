import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { CurrentScope, requireRole, type Scope } from '../workspaces/scope.js';
import { RunResponseDto } from './dto/run-response.dto.js';
import { RunsService } from './runs.service.js';
import { TermsRequired } from '../auth/decorators.js';

@ApiTags('runs')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('runs')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Get(':id')
  @ApiOperation({
    summary:
      'A run with its timeline (its Temporal workflow history while it runs; once ended, the timeline the run archived)',
  })
  @ApiOkResponse({ type: RunResponseDto, description: 'The run, with its timeline' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'RUN_NOT_FOUND')
  async get(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<RunResponseDto> {
    return this.runs.describe(await this.runs.findInScope(scope, id));
  }

  @Post(':id/cancel')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Cancel a queued or active run (RUN_NOT_CANCELLABLE once it ended)' })
  @ApiOkResponse({ type: RunResponseDto, description: 'The run, cancelled (without its timeline)' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'RUN_NOT_FOUND', 'PERMISSION_DENIED', 'RUN_NOT_CANCELLABLE')
  async cancel(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<RunResponseDto> {
    const run = await this.runs.findInScope(scope, id);
    requireRole(scope, 'member', 'Cancelling a run');
    return this.runs.cancel(run);
  }
}
