import { ApiProperty } from '@nestjs/swagger';
import { PageDto } from '../../common/api-schemas.js';
import type { DeliveryOutcome, WebhookDeliveryView } from '../webhook-deliveries.service.js';

/** One delivery to the agent's webhook URL, as kept: nothing the sender sent but the failing field names. */
export class WebhookDeliveryDto implements WebhookDeliveryView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'date-time', description: 'When the delivery was answered' })
  receivedAt: string;

  @ApiProperty({
    enum: ['accepted', 'duplicate', 'refused'],
    description: "duplicate: a repeated X-Webhook-Delivery-Id, answered with the first delivery's run",
  })
  outcome: DeliveryOutcome;

  @ApiProperty({ type: 'integer', description: 'The HTTP status answered: 202, or the refusal’s' })
  statusCode: number;

  @ApiProperty({ type: String, nullable: true, description: "The refusal's error code; null when accepted" })
  code: string | null;

  @ApiProperty({
    type: [String],
    description: 'The fields a refused payload got wrong (names only, never values); empty otherwise',
  })
  fields: string[];

  @ApiProperty({ type: String, nullable: true, description: "The request's id (its X-Request-Id answer header)" })
  requestId: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The run an accepted delivery queued (it holds the payload); null when refused or the run was deleted',
  })
  runId: string | null;
}

export class WebhookDeliveryPageDto extends PageDto(WebhookDeliveryDto) {}
