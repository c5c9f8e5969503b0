import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreditsModule } from '../credits/credits.module.js';
import { ModelModule } from '../model/model.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { ChatController } from './chat.controller.js';
import { ChatMessageEntity, ChatSessionEntity } from './chat.entities.js';
import { ChatService } from './chat.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([ChatSessionEntity, ChatMessageEntity]), ModelModule, ToolsModule, CreditsModule],
  controllers: [ChatController],
  providers: [ChatService],
})
export class ChatModule {}
