import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/decorators.js';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import { CreditsService } from '../credits/credits.service.js';
import { type RunResponse, RunsService } from '../runs/runs.service.js';
import { type AgentResponse, AgentsService } from './agents.service.js';
import { CreateAgentDto, StartRunDto, UpdateAgentDto } from './dto/agent.dto.js';
import { SchedulesService } from './schedules.service.js';

@ApiTags('agents')
@ApiBearerAuth()
@Controller('agents')
export class AgentsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly runs: RunsService,
    private readonly schedules: SchedulesService,
    private readonly credits: CreditsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create an agent (webhook agents get their URL and secret in this answer only)' })
  create(@CurrentUser() auth: AuthUser, @Body() body: CreateAgentDto): Promise<AgentResponse> {
    return this.agents.create(auth.user, body);
  }

  @Get()
  @ApiOperation({ summary: 'Your agents' })
  list(@CurrentUser() auth: AuthUser, @Query() query: ListQueryDto): Promise<Page<AgentResponse>> {
    return this.agents.list(auth.user.id, pageQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One agent (no secret); scheduled agents show their next firing' })
  async get(@CurrentUser() auth: AuthUser, @Param('id') id: string) {
    const agent = await this.agents.findOwnedOrFail(auth.user.id, id);
    const response = this.agents.toResponse(agent);
    if (agent.triggerType === 'scheduled') {
      return { ...response, schedule: await this.schedules.describe(agent.id) };
    }
    return response;
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change an agent; a new schedule updates the Temporal schedule' })
  async update(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: UpdateAgentDto,
  ): Promise<AgentResponse> {
    return this.agents.update(auth.user, await this.agents.findOwnedOrFail(auth.user.id, id), body);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete an agent: its schedule is deleted and an active run cancelled' })
  async remove(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<void> {
    const agent = await this.agents.findOwnedOrFail(auth.user.id, id);
    await this.runs.stopAgent(agent.id);
    await this.agents.remove(agent);
  }

  @Post(':id/webhook-secret/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'A new webhook secret; the old one stops working at once' })
  async rotate(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<{ webhookSecret: string }> {
    return this.agents.rotateSecret(await this.agents.findOwnedOrFail(auth.user.id, id));
  }

  @Post(':id/runs')
  @ApiOperation({ summary: 'Run the agent now (AGENT_ALREADY_RUNNING while a run is queued or active)' })
  async start(@CurrentUser() auth: AuthUser, @Param('id') id: string, @Body() body: StartRunDto): Promise<RunResponse> {
    const agent = await this.agents.findOwnedOrFail(auth.user.id, id);
    await this.credits.assertCredits(agent.userId);
    const { run } = await this.runs.enqueue(agent, {
      triggeredBy: 'manual',
      mode: 'reject_if_busy',
      input: body.input ?? null,
    });
    return run;
  }

  @Get(':id/runs')
  @ApiOperation({ summary: "The agent's runs, newest first" })
  async runsOf(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Query() query: ListQueryDto,
  ): Promise<Page<RunResponse>> {
    const agent = await this.agents.findOwnedOrFail(auth.user.id, id);
    return this.runs.listForAgent(agent.id, pageQuery(query));
  }
}
