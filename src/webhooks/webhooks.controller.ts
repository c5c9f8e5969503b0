import { Body, Controller, Headers, HttpCode, HttpStatus, Param, Post, Req } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiConsumes, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { type ApiRequest, hasBodyOfType } from '../common/http.js';
import { Public } from '../auth/decorators.js';
import { ApiErrors } from '../common/api-errors.js';
import { PUBLIC_ERRORS } from '../common/api-schemas.js';
import { WebhookAcceptedDto } from './dto/webhook-accepted.dto.js';
import { WebhooksService } from './webhooks.service.js';

@ApiTags('webhooks')
@Controller('webhooks/agent')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Public()
  @Post(':agentId')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiHeader({
    name: 'X-Webhook-Secret',
    required: true,
    description: 'The secret shown when the agent was saved (or its secret rotated)',
  })
  @ApiHeader({
    name: 'X-Webhook-Delivery-Id',
    required: false,
    description: 'A repeated delivery returns the first run',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' },
  })
  @ApiConsumes('application/json')
  @ApiBody({
    description:
      "A JSON object with the fields of the agent's webhook schema (other fields are allowed); with " +
      'allowActionOverride, a string `action` replaces the system prompt',
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiAcceptedResponse({ type: WebhookAcceptedDto })
  @ApiErrors(
    ...PUBLIC_ERRORS,
    'AGENT_NOT_FOUND',
    'WEBHOOK_SECRET_INVALID',
    'TIER_REQUIRED',
    'SUBSCRIPTION_PAST_DUE',
    'WEBHOOK_PAYLOAD_INVALID',
    'NO_CREDITS',
  )
  @ApiOperation({
    summary: 'Trigger a webhook agent: 202 once the run is durably queued',
    description:
      'RATE_LIMITED (with Retry-After) also when the agent already has MAX_QUEUED_RUNS (1,000) runs waiting: ' +
      'the delivery is refused before it is accepted, and may be sent again later.',
  })
  trigger(
    @Param('agentId') agentId: string,
    @Headers('x-webhook-secret') secret: string | undefined,
    @Headers('x-webhook-delivery-id') deliveryId: string | undefined,
    @Req() req: ApiRequest,
    @Body() body: unknown,
  ): Promise<WebhookAcceptedDto> {
    return this.webhooks.trigger({ agentId, secret, deliveryId, isJson: hasBodyOfType(req, 'application/json'), body });
  }
}
