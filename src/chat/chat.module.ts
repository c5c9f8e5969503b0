import { Module } from '@nestjs/common';
import { AgentsCoreModule } from '../agents/agents-core.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { SitesCoreModule } from '../sites/sites-core.module.js';
import { ChatController } from './chat.controller.js';
import { ChatReplyService } from './chat-reply.service.js';
import { ChatSessionsService } from './chat-sessions.service.js';
import { ChatTurnService } from './chat-turn.service.js';
import { ChatRepository } from './chat.repository.js';

@Module({
  imports: [DatabaseModule, SitesCoreModule, AgentsCoreModule],
  controllers: [ChatController],
  providers: [ChatRepository, ChatSessionsService, ChatReplyService, ChatTurnService],
})
export class ChatModule {}
