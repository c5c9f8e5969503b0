import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { PrefetchOnAuth } from '../auth/prefetch.js';
import { CurrentScope, type Scope } from '../workspaces/scope.js';
import type { MessageResponse, SessionResponse } from './chat-responses.js';
import { ChatSessionsService } from './chat-sessions.service.js';
import { CHAT_TURN_PREFETCH, ChatTurnService } from './chat-turn.service.js';
import { CreateSessionDto, SendMessageDto } from './dto/chat.dto.js';

@ApiTags('chat')
@ApiBearerAuth()
@TermsRequired()
@Controller('sessions')
export class ChatController {
  constructor(
    private readonly sessions: ChatSessionsService,
    private readonly turns: ChatTurnService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a chat session over chosen sites (and tools): answers its token' })
  create(@CurrentScope() scope: Scope, @Body() body: CreateSessionDto): Promise<SessionResponse & { token: string }> {
    return this.sessions.create(scope, body);
  }

  @Get(':token')
  @ApiOperation({ summary: 'The session with its messages' })
  get(
    @CurrentUser() auth: AuthUser,
    @Param('token') token: string,
  ): Promise<SessionResponse & { messages: MessageResponse[] }> {
    return this.sessions.describeByToken(auth.user.id, token);
  }

  @Delete(':token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete the session and its messages' })
  remove(@CurrentUser() auth: AuthUser, @Param('token') token: string): Promise<void> {
    return this.sessions.removeByToken(auth.user.id, token);
  }

  /**
   * A chat turn, as SSE (`Accept: text/event-stream`) or one JSON answer (see ChatTurnService.send).
   * Its session and messages are read during authentication (@PrefetchOnAuth).
   */
  @Post(':token/messages')
  @PrefetchOnAuth(CHAT_TURN_PREFETCH)
  @ApiProduces('application/json', 'text/event-stream')
  @ApiOperation({ summary: 'Send a message; streamed as SSE with Accept: text/event-stream' })
  send(
    @CurrentUser() auth: AuthUser,
    @Param('token') token: string,
    @Body() body: SendMessageDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.turns.send(auth, token, body.content, req, res);
  }
}
