import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AgentsService } from '../agents/agents.service.js';
import { TermsRequired } from '../auth/decorators.js';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import { CreditsService } from '../credits/credits.service.js';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import { StartRunDto } from './dto/start-run.dto.js';
import { RunEnqueueService } from './run-enqueue.service.js';
import type { RunResponse } from './run-response.js';
import { RunsService } from './runs.service.js';

/**
 * An agent's runs: the /agents/:id/runs routes live here because they start and list runs (agents
 * cannot import runs, which build on agents). The class decorators and the operationIds are those
 * of AgentsController, where the routes used to be, so the API document and the guards see the
 * same routes.
 */
@ApiTags('agents')
@ApiBearerAuth()
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's agents" })
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
  async start(@CurrentScope() scope: Scope, @Param('id') id: string, @Body() body: StartRunDto): Promise<RunResponse> {
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
  async runsOf(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Query() query: ListQueryDto,
  ): Promise<Page<RunResponse>> {
    const agent = await this.agents.findInScope(scope, id);
    return this.runs.listForAgent(agent.id, pageQuery(query));
  }
}
