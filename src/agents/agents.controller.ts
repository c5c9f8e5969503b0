import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { ListQueryDto, pageQuery } from '../common/pagination.js';
import { CurrentScope, requireRole, type Scope } from '../workspaces/scope.js';
import { AgentsService } from './agents.service.js';
import { AgentRemovalHooks } from './agent-removal-hooks.js';
import {
  AgentDetailDto,
  AgentPageDto,
  AgentResponseDto,
  NotifySecretDto,
  WebhookSecretDto,
} from './dto/agent-response.dto.js';
import { CreateAgentDto, UpdateAgentDto } from './dto/agent.dto.js';
import { SchedulesService } from './schedules.service.js';
import { TermsRequired } from '../auth/decorators.js';

/**
 * In a workspace: viewers read agents and runs, members create and run agents, admins change and
 * delete them. Starting and listing an agent's runs live in runs/agent-runs.controller.ts.
 */
@ApiTags('agents')
@ApiBearerAuth()
@ApiWorkspaceHeader()
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
  @ApiCreatedResponse({ type: AgentResponseDto })
  @ApiErrors(
    ...TERMS_GATED_ERRORS,
    'PERMISSION_DENIED',
    'TIER_REQUIRED',
    'SUBSCRIPTION_PAST_DUE',
    'AGENT_LIMIT_REACHED',
  )
  create(@CurrentScope() scope: Scope, @Body() body: CreateAgentDto): Promise<AgentResponseDto> {
    return this.agents.create(scope, body);
  }

  @Get()
  @ApiOperation({ summary: 'The agents' })
  @ApiOkResponse({ type: AgentPageDto })
  @ApiErrors(...TERMS_GATED_ERRORS)
  list(@CurrentScope() scope: Scope, @Query() query: ListQueryDto): Promise<AgentPageDto> {
    return this.agents.list(scope, pageQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One agent (no secret); scheduled agents show their next firing' })
  @ApiOkResponse({ type: AgentDetailDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND')
  async get(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<AgentDetailDto> {
    const agent = await this.agents.findInScope(scope, id);
    const response = this.agents.toResponse(agent);
    if (agent.triggerType === 'scheduled') {
      const schedule = await this.schedules.describe(agent.id);
      return schedule === undefined ? response : { ...response, schedule };
    }
    return response;
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change an agent; a new schedule updates the Temporal schedule' })
  @ApiOkResponse({ type: AgentResponseDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND', 'PERMISSION_DENIED', 'TIER_REQUIRED', 'SUBSCRIPTION_PAST_DUE')
  async update(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: UpdateAgentDto,
  ): Promise<AgentResponseDto> {
    return this.agents.update(scope, await this.agents.findInScope(scope, id), body);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete an agent: its schedule is deleted and an active run cancelled' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND', 'PERMISSION_DENIED')
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
  @ApiOkResponse({ type: AgentResponseDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND', 'PERMISSION_DENIED')
  share(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<AgentResponseDto> {
    return this.agents.share(scope, id);
  }

  @Post(':id/webhook-secret/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'A new webhook secret; the old one stops working at once' })
  @ApiOkResponse({ type: WebhookSecretDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND', 'PERMISSION_DENIED')
  async rotate(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<WebhookSecretDto> {
    const agent = await this.agents.findInScope(scope, id);
    requireRole(scope, 'admin', 'Rotating a webhook secret');
    return this.agents.rotateSecret(agent);
  }

  @Post(':id/notify-secret/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'A new notification signing secret, shown this once; later notifications are signed with it only',
  })
  @ApiOkResponse({ type: NotifySecretDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND', 'PERMISSION_DENIED')
  async rotateNotifySecret(@CurrentScope() scope: Scope, @Param('id') id: string): Promise<NotifySecretDto> {
    const agent = await this.agents.findInScope(scope, id);
    requireRole(scope, 'member', 'Rotating a notification secret');
    return this.agents.rotateNotifySecret(agent);
  }
}
