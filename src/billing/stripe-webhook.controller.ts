import { Controller, Headers, HttpCode, HttpStatus, Post, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { ApiRequest } from '../common/http.js';
import { Public } from '../auth/decorators.js';
import { AppError } from '../common/app-error.js';
import { ApiErrors } from '../common/api-errors.js';
import { PUBLIC_ERRORS } from '../common/api-schemas.js';
import { BillingEventsService } from './billing-events.service.js';
import { EventReceiptDto } from './dto/billing-responses.dto.js';

/** Where Stripe delivers its events (configured in the Stripe dashboard as `<PUBLIC_BASE_URL>` + this). */
export const STRIPE_WEBHOOK_PATH = '/api/webhooks/stripe';

@ApiTags('billing')
// Beside the agents' webhooks, outside /api/billing: Stripe accepts no terms of service.
@Controller('webhooks/stripe')
export class StripeWebhookController {
  constructor(private readonly events: BillingEventsService) {}

  @Public()
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiHeader({ name: 'Stripe-Signature', required: true, description: "Stripe's signature of the delivery" })
  @ApiConsumes('application/json')
  @ApiBody({
    description: 'A Stripe event, exactly as Stripe sent it',
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiOkResponse({ type: EventReceiptDto })
  @ApiErrors(...PUBLIC_ERRORS, 'NOT_FOUND', 'WEBHOOK_SECRET_INVALID', 'WEBHOOK_PAYLOAD_INVALID')
  @ApiOperation({
    summary:
      "Stripe's webhook events (PAYMENT_PROVIDER=stripe; NOT_FOUND otherwise): verified by signature, applied once per event id",
  })
  receive(
    @Headers('stripe-signature') signature: string | undefined,
    @Req() req: ApiRequest,
  ): Promise<EventReceiptDto> {
    // The signature covers the exact bytes: the app reads this route's body raw (app.factory.ts).
    if (!Buffer.isBuffer(req.body)) {
      throw new AppError('WEBHOOK_PAYLOAD_INVALID', 'The event must be sent as a body of bytes (application/json)');
    }
    return this.events.receive(req.body, signature);
  }
}
