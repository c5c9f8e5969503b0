import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** The public webhook intake: checks an agent's signed payload and queues a run. */
@Module({
  imports: [AgentsModule, RunsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService],
})
export class WebhooksModule {}
