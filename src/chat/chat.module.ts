import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreditsModule } from '../credits/credits.module.js';
import { ModelModule } from '../model/model.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { ChatController } from './chat.controller.js';
import { ChatMessageEntity, ChatSessionEntity } from './chat.entities.js';
import { ChatReplyService } from './chat-reply.service.js';
import { ChatSessionsService } from './chat-sessions.service.js';
import { ChatTurnService } from './chat-turn.service.js';
import { ChatRepository } from './chat.repository.js';
import { TurnContextCache } from './turn-context-cache.js';

@Module({
  imports: [TypeOrmModule.forFeature([ChatSessionEntity, ChatMessageEntity]), ModelModule, ToolsModule, CreditsModule],
  controllers: [ChatController],
  providers: [ChatRepository, TurnContextCache, ChatSessionsService, ChatReplyService, ChatTurnService],
})
export class ChatModule {}
