import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AgentsService } from '../agents/agents.service.js';
import { TermsRequired } from '../auth/decorators.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { ListQueryDto, pageQuery } from '../common/pagination.js';
import { CreditsService } from '../credits/credits.service.js';
import { CurrentScope, requireRole, type Scope } from '../workspaces/scope.js';
import { RunPageDto, RunResponseDto } from './dto/run-response.dto.js';
import { StartRunDto } from './dto/start-run.dto.js';
import { RunEnqueueService } from './run-enqueue.service.js';
import { RunsService } from './runs.service.js';

/**
 * An agent's runs: the /agents/:id/runs routes live here because they start and list runs (agents
 * cannot import runs, which build on agents). The class decorators and the operationIds are those
 * of AgentsController, where the routes used to be, so the API document and the guards see the
 * same routes.
 */
@ApiTags('agents')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('agents')
export class AgentRunsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly runs: RunsService,
    private readonly enqueuer: RunEnqueueService,
    private readonly credits: CreditsService,
  ) {}

  @Post(':id/runs')
  @ApiOperation({
    operationId: 'AgentsController_start',
    summary: 'Run the agent now (AGENT_ALREADY_RUNNING while a run is queued or active)',
  })
  @ApiCreatedResponse({ type: RunResponseDto, description: 'The run, queued (triggeredBy: manual)' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND', 'PERMISSION_DENIED', 'NO_CREDITS', 'AGENT_ALREADY_RUNNING')
  async start(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: StartRunDto,
  ): Promise<RunResponseDto> {
    const agent = await this.agents.findInScope(scope, id);
    requireRole(scope, 'member', 'Running an agent');
    await this.credits.assertCredits(agent.userId);
    const { run } = await this.enqueuer.enqueue(agent, {
      triggeredBy: 'manual',
      mode: 'reject_if_busy',
      input: body.input ?? null,
    });
    return run;
  }

  @Get(':id/runs')
  @ApiOperation({ operationId: 'AgentsController_runsOf', summary: "The agent's runs, newest first" })
  @ApiOkResponse({ type: RunPageDto, description: 'Runs without their timelines' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND')
  async runsOf(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Query() query: ListQueryDto,
  ): Promise<RunPageDto> {
    const agent = await this.agents.findInScope(scope, id);
    return this.runs.listForAgent(agent.id, pageQuery(query));
  }
}
