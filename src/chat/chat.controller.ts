import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Logger,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { AppError } from '../common/app-error.js';
import { correlationIdOf } from '../common/correlation.js';
import { toAppError, writeAppError } from '../common/error-filter.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CurrentScope, type Scope } from '../workspaces/scope.js';
import {
  ChatService,
  type MessageResponse,
  type SessionResponse,
  TURN_PREFETCH,
  type TurnPrefetch,
  type TurnSink,
} from './chat.service.js';
import { CreateSessionDto, SendMessageDto } from './dto/chat.dto.js';

function sse(res: Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

@ApiTags('chat')
@ApiBearerAuth()
@TermsRequired()
@Controller('sessions')
export class ChatController {
  private readonly logger = new Logger('Chat');

  constructor(
    private readonly chat: ChatService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a chat session over chosen sites (and tools): answers its token' })
  create(@CurrentScope() scope: Scope, @Body() body: CreateSessionDto): Promise<SessionResponse & { token: string }> {
    return this.chat.create(scope, body);
  }

  @Get(':token')
  @ApiOperation({ summary: 'The session with its messages' })
  async get(
    @CurrentUser() auth: AuthUser,
    @Param('token') token: string,
  ): Promise<SessionResponse & { messages: MessageResponse[] }> {
    const session = await this.chat.findByToken(auth.user.id, token);
    return { ...(await this.chat.describeSession(session)), messages: await this.chat.messages(session) };
  }

  @Delete(':token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete the session and its messages' })
  async remove(@CurrentUser() auth: AuthUser, @Param('token') token: string): Promise<void> {
    await this.chat.remove(await this.chat.findByToken(auth.user.id, token));
  }

  /**
   * A chat turn. With `Accept: text/event-stream` the answer is an SSE stream of `text`, `tool_call`,
   * `tool_result`, then `done` (or `error`); otherwise one JSON answer when the turn ends. The whole
   * turn is capped (CHAT_TIMEOUT); a client that goes away aborts it (STREAM_ABORTED, nothing saved).
   */
  @Post(':token/messages')
  @ApiProduces('application/json', 'text/event-stream')
  @ApiOperation({ summary: 'Send a message; streamed as SSE with Accept: text/event-stream' })
  async send(
    @CurrentUser() auth: AuthUser,
    @Param('token') token: string,
    @Body() body: SendMessageDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    // Read ahead during authentication (ChatService.onModuleInit) when it was for this user and token.
    const ahead = (req as unknown as Record<symbol, TurnPrefetch | undefined>)[TURN_PREFETCH];
    const context = await (ahead !== undefined && ahead.userId === auth.user.id && ahead.token === token
      ? ahead.context
      : this.chat.openTurn(auth.user.id, token));
    const streaming = (req.headers.accept ?? '').includes('text/event-stream');
    const controller = new AbortController();
    let ended: 'timeout' | 'client' | undefined;
    const timer = setTimeout(() => {
      ended ??= 'timeout';
      controller.abort(new Error('chat timeout'));
    }, this.settings.chatTimeoutMs);
    res.on('close', () => {
      if (!res.writableEnded) {
        ended ??= 'client';
        controller.abort(new Error('client disconnected'));
      }
    });
    let sink: TurnSink | undefined;
    if (streaming) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();
      sink = {
        text: (delta) => sse(res, 'text', { delta }),
        toolCall: (call) => sse(res, 'tool_call', call),
        toolResult: (result) => sse(res, 'tool_result', result),
      };
    }
    try {
      const message = await this.chat.turn(context, body.content, sink, controller.signal, auth.user.credits);
      if (streaming) {
        sse(res, 'done', { messageId: message.id, usage: message.usage });
        res.end();
      } else {
        res.status(200).json({ message });
      }
    } catch (err) {
      let error: AppError;
      if (ended === 'client') {
        const aborted = new AppError('STREAM_ABORTED', 'The client disconnected; the partial response was not saved');
        this.logger.warn(
          `${correlationIdOf(req)} ${aborted.code} (${aborted.statusCode}) session ${context.session.id}: ${aborted.message}`,
        );
        return;
      } else if (ended === 'timeout') {
        error = new AppError(
          'CHAT_TIMEOUT',
          `The AI response exceeded ${Math.round(this.settings.chatTimeoutMs / 1000)} seconds`,
        );
      } else {
        const known = toAppError(err, req);
        if (known === undefined) {
          this.logger.error(`${correlationIdOf(req)} chat turn failed`, err instanceof Error ? err.stack : String(err));
        }
        error = known ?? new AppError('MODEL_ERROR', 'The chat turn failed unexpectedly');
      }
      if (streaming) {
        sse(res, 'error', error.toBody());
        res.end();
      } else {
        writeAppError(res, error);
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
