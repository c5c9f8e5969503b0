import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AgentsService } from '../agents/agents.service.js';
import { TermsRequired } from '../auth/decorators.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { ListQueryDto, pageQuery } from '../common/pagination.js';
import { CurrentScope, type Scope } from '../workspaces/scope.js';
import { WebhookDeliveryPageDto } from './dto/webhook-delivery.dto.js';
import { WEBHOOK_DELIVERIES_KEPT, WebhookDeliveriesService } from './webhook-deliveries.service.js';

/**
 * An agent's webhook deliveries: under /agents/:id like its runs, here because webhooks keep them
 * (agents cannot import webhooks). The tags and the operationId are the agents' ones.
 */
@ApiTags('agents')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('agents')
export class WebhookDeliveriesController {
  constructor(
    private readonly agents: AgentsService,
    private readonly deliveries: WebhookDeliveriesService,
  ) {}

  @Get(':id/webhook-deliveries')
  @ApiOperation({
    operationId: 'AgentsController_webhookDeliveries',
    summary: "The agent's webhook deliveries, accepted and refused, newest first",
    description:
      `The newest ${WEBHOOK_DELIVERIES_KEPT} deliveries of the agent (older ones are deleted as new ones come), ` +
      'for a sender whose calls fail: status, code, failing field names, request id, and the run an accepted ' +
      'one queued. Never the secret, the headers or a refused payload. Every workspace role may read them.',
  })
  @ApiOkResponse({ type: WebhookDeliveryPageDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'AGENT_NOT_FOUND')
  async list(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Query() query: ListQueryDto,
  ): Promise<WebhookDeliveryPageDto> {
    const agent = await this.agents.findInScope(scope, id);
    return this.deliveries.list(agent.id, pageQuery(query));
  }
}
