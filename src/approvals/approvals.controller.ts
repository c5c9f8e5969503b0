import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TermsRequired } from '../auth/decorators.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { pageQuery } from '../common/pagination.js';
import { RunResponseDto } from '../runs/dto/run-response.dto.js';
import { CurrentScope, type Scope } from '../workspaces/scope.js';
import { ApprovalsService } from './approvals.service.js';
import { ApprovalPageDto, ApprovalsQueryDto, DecideApprovalDto } from './dto/approval.dto.js';

/**
 * The approvals inbox and decisions. In a workspace every role sees its approvals; members and up
 * decide. A run's approvals are reached through the run (its scope is its agent's).
 */
@ApiTags('approvals')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('approvals')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Get()
  @ApiOperation({
    summary:
      "The calls of your agents' runs that waited or wait for a decision, newest first (in a workspace: its agents')",
  })
  @ApiOkResponse({ type: ApprovalPageDto })
  @ApiErrors(...TERMS_GATED_ERRORS)
  list(@CurrentScope() scope: Scope, @Query() query: ApprovalsQueryDto): Promise<ApprovalPageDto> {
    return this.approvals.list(scope, query.status, pageQuery(query));
  }
}

/** Deciding: a run's approval, reached through the run. */
@ApiTags('approvals')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('runs')
export class RunApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Post(':id/approvals/:approvalId')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Approve or deny the call a run waits on; answers the run once the decision is recorded (members and up)',
  })
  @ApiOkResponse({ type: RunResponseDto, description: 'The run, with its timeline' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'RUN_NOT_FOUND', 'PERMISSION_DENIED')
  decide(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Param('approvalId') approvalId: string,
    @Body() body: DecideApprovalDto,
  ): Promise<RunResponseDto> {
    return this.approvals.decide(scope, id, approvalId, body);
  }
}
