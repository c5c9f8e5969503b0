import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { WebhookAccepted } from '../webhooks.service.js';

/** A delivery durably queued as a run. */
export class WebhookAcceptedDto implements WebhookAccepted {
  @ApiProperty({ format: 'uuid' })
  runId: string;

  @ApiProperty({ enum: ['queued'] })
  status: 'queued';

  @ApiProperty({ type: 'integer', description: "The run's place in the agent's queue" })
  queuePosition: number;

  @ApiPropertyOptional({
    type: Boolean,
    enum: [true],
    description: 'A repeated X-Webhook-Delivery-Id: the run of the first delivery',
  })
  duplicate?: boolean;
}
