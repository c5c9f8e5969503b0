import { Module } from '@nestjs/common';
import { RunsController } from '../runs/runs.controller.js';
import { UsersModule } from '../users/users.module.js';
import { WebhooksController } from '../webhooks/webhooks.controller.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { AgentsCoreModule } from './agents-core.module.js';
import { AgentsController } from './agents.controller.js';

@Module({
  imports: [AgentsCoreModule, UsersModule],
  controllers: [AgentsController, RunsController, WebhooksController],
  providers: [WebhooksService],
})
export class AgentsModule {}
