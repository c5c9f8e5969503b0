import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import { type AgentResponse, AgentsService } from './agents.service.js';
import { AgentRemovalHooks } from './agent-removal-hooks.js';
import { CreateAgentDto, UpdateAgentDto } from './dto/agent.dto.js';
import { SchedulesService } from './schedules.service.js';
import { TermsRequired } from '../auth/decorators.js';

/**
 * In a workspace: viewers read agents and runs, members create and run agents, admins change and
 * delete them. Starting and listing an agent's runs live in runs/agent-runs.controller.ts.
 */
@ApiTags('agents')
@ApiBearerAuth()
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's agents" })
@TermsRequired()
@Controller('agents')
export class AgentsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly schedules: SchedulesService,
    private readonly removal: AgentRemovalHooks,
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
    // Runs registers its hook: the agent's queue stops (an active run cancelled) before the row goes.
    await this.removal.beforeRemove(agent.id);
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
}
