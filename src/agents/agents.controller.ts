import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import { CreditsService } from '../credits/credits.service.js';
import { RunEnqueueService } from '../runs/run-enqueue.service.js';
import type { RunResponse } from '../runs/run-response.js';
import { RunsService } from '../runs/runs.service.js';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import { type AgentResponse, AgentsService } from './agents.service.js';
import { CreateAgentDto, StartRunDto, UpdateAgentDto } from './dto/agent.dto.js';
import { SchedulesService } from './schedules.service.js';
import { TermsRequired } from '../auth/decorators.js';

/** In a workspace: viewers read agents and runs, members create and run agents, admins change and delete them. */
@ApiTags('agents')
@ApiBearerAuth()
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's agents" })
@TermsRequired()
@Controller('agents')
export class AgentsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly runs: RunsService,
    private readonly enqueuer: RunEnqueueService,
    private readonly schedules: SchedulesService,
    private readonly credits: CreditsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create an agent (webhook agents get their URL and secret in this answer only)' })
  create(@CurrentScope() scope: Scope, @Body() body: CreateAgentDto): Promise<AgentResponse> {
    return this.agents.create(scope, body);
  }

  @Get()
  @ApiOperation({ summary: 'The agents' })
  list(@CurrentScope() scope: Scope, @Query() query: ListQueryDto): Promise<Page<AgentResponse>> {
    return this.agents.list(scope, pageQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One agent (no secret); scheduled agents show their next firing' })
  async get(@CurrentScope() scope: Scope, @Param('id') id: string) {
    const agent = await this.agents.findInScope(scope, id);
    const response = this.agents.toResponse(agent);
    if (agent.triggerType === 'scheduled') {
      return { ...response, schedule: await this.schedules.describe(agent.id) };
    }
    return response;
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change an agent; a new schedule updates the Temporal schedule' })
  async update(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: UpdateAgentDto,
  ): Promise<AgentResponse> {
    return this.agents.update(scope, await this.agents.findInScope(scope, id), body);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete an agent: its schedule is deleted and an active run cancelled' })
  async remove(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<void> {
    const agent = await this.agents.findInScope(scope, id);
    requireRole(scope, 'admin', 'Deleting an agent');
    await this.runs.stopAgent(agent.id);
    await this.agents.remove(agent);
  }

  @Post(':id/share')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Move one of your agents into the workspace of X-Workspace-Id (WORKSPACE_REQUIRED without it)',
  })
  share(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<AgentResponse> {
    return this.agents.share(scope, id);
  }

  @Post(':id/webhook-secret/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'A new webhook secret; the old one stops working at once' })
  async rotate(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<{ webhookSecret: string }> {
    const agent = await this.agents.findInScope(scope, id);
    requireRole(scope, 'admin', 'Rotating a webhook secret');
    return this.agents.rotateSecret(agent);
  }

  @Post(':id/runs')
  @ApiOperation({ summary: 'Run the agent now (AGENT_ALREADY_RUNNING while a run is queued or active)' })
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
  @ApiOperation({ summary: "The agent's runs, newest first" })
  async runsOf(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Query() query: ListQueryDto,
  ): Promise<Page<RunResponse>> {
    const agent = await this.agents.findInScope(scope, id);
    return this.runs.listForAgent(agent.id, pageQuery(query));
  }
}
