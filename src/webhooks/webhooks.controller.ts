import { Body, Controller, Headers, HttpCode, HttpStatus, Param, Post, Req } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { AgentsService, secretMatches } from '../agents/agents.service.js';
import { Public } from '../auth/decorators.js';
import { requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { RunsService } from '../runs/runs.service.js';
import { validatePayload } from './webhook-payload.js';

export interface WebhookAccepted {
  runId: string;
  status: 'queued';
  queuePosition: number;
  duplicate?: boolean;
}

const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,200}$/;

@ApiTags('webhooks')
@Controller('webhooks/agent')
export class WebhooksController {
  constructor(
    private readonly agents: AgentsService,
    private readonly runs: RunsService,
  ) {}

  @Public()
  @Post(':agentId')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiHeader({ name: 'X-Webhook-Secret', required: true })
  @ApiHeader({
    name: 'X-Webhook-Delivery-Id',
    required: false,
    description: 'A repeated delivery returns the first run',
  })
  @ApiOperation({ summary: 'Trigger a webhook agent: 202 once the run is durably queued' })
  async trigger(
    @Param('agentId') agentId: string,
    @Headers('x-webhook-secret') secret: string | undefined,
    @Headers('x-webhook-delivery-id') deliveryId: string | undefined,
    @Req() req: Request,
    @Body() body: unknown,
  ): Promise<WebhookAccepted> {
    const target = await this.agents.webhookTarget(agentId);
    if (target === null || target.agent.triggerType !== 'webhook') {
      throw new AppError('AGENT_NOT_FOUND', 'No webhook agent with this id');
    }
    const { agent, tierOwner, payerCredits } = target;
    if (!secretMatches(secret, agent.webhookSecretHash)) {
      throw new AppError('WEBHOOK_SECRET_INVALID', 'X-Webhook-Secret is missing or does not match');
    }
    // The tier that counts: the workspace owner's for a workspace agent, else the agent owner's.
    requireFeature(tierOwner, (l) => l.webhookAgents, 'Webhook triggers (harness tier or higher)');
    if (!req.is('application/json')) {
      throw new AppError('WEBHOOK_PAYLOAD_INVALID', 'Content-Type must be application/json', [
        { field: 'content-type', message: 'must be application/json' },
      ]);
    }
    if (deliveryId !== undefined && !DELIVERY_ID.test(deliveryId)) {
      throw AppError.validation([
        { field: 'X-Webhook-Delivery-Id', message: 'must be 1-200 characters of A-Z a-z 0-9 . _ : -' },
      ]);
    }
    const payload = validatePayload(agent.webhookSchema ?? [], body);
    if (payerCredits <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const action =
      agent.allowActionOverride && typeof payload.action === 'string' && payload.action.trim() !== ''
        ? payload.action
        : null;
    const { run, queuePosition, duplicate } = await this.runs.enqueueWebhook(agent, {
      payload,
      actionOverride: action,
      deliveryId: deliveryId ?? null,
    });
    return { runId: run.id, status: 'queued', queuePosition, ...(duplicate ? { duplicate } : {}) };
  }
}
