import { Body, Controller, Headers, HttpCode, HttpStatus, Param, Post, Req } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../auth/decorators.js';
import { type WebhookAccepted, WebhooksService } from './webhooks.service.js';

@ApiTags('webhooks')
@Controller('webhooks/agent')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

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
  trigger(
    @Param('agentId') agentId: string,
    @Headers('x-webhook-secret') secret: string | undefined,
    @Headers('x-webhook-delivery-id') deliveryId: string | undefined,
    @Req() req: Request,
    @Body() body: unknown,
  ): Promise<WebhookAccepted> {
    return this.webhooks.trigger({ agentId, secret, deliveryId, isJson: Boolean(req.is('application/json')), body });
  }
}
