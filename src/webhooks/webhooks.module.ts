import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentsModule } from '../agents/agents.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * The public webhook intake: checks an agent's signed payload and queues a run; and the bounded
 * record of each agent's deliveries (GET /agents/:id/webhook-deliveries).
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookDeliveryEntity]), AgentsModule, RunsModule],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhooksService, WebhookDeliveriesService, WebhooksRepository],
})
export class WebhooksModule {}
