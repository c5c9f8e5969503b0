import { Module } from '@nestjs/common';
import { AgentsCoreModule } from '../agents/agents-core.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { SitesCoreModule } from '../sites/sites-core.module.js';
import { ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';

@Module({
  imports: [DatabaseModule, SitesCoreModule, AgentsCoreModule],
  controllers: [ChatController],
  providers: [ChatService],
})
export class ChatModule {}
