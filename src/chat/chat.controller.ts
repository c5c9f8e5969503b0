import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { ApiReply, ApiRequest } from '../common/http.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { PrefetchOnAuth } from '../auth/prefetch.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { ListQueryDto, pageQuery } from '../common/pagination.js';
import { CurrentScope, type Scope } from '../workspaces/scope.js';
import { ChatSessionsService, SESSION_TOKEN_OR_ID } from './chat-sessions.service.js';
import { CHAT_TURN_PREFETCH, ChatTurnService } from './chat-turn.service.js';
import {
  CHAT_EVENTS,
  ChatReplyDto,
  CreatedSessionDto,
  SessionDetailDto,
  SessionPageDto,
} from './dto/chat-response.dto.js';
import { CreateSessionDto, SendMessageDto } from './dto/chat.dto.js';

/** What reading or using a session by its token can answer, besides the guards. */
const SESSION_ERRORS = [
  'INVALID_SESSION',
  'SESSION_NOT_FOUND',
  'SESSION_EXPIRED',
  'PERMISSION_DENIED',
  'WORKSPACE_REQUIRED',
] as const;

/** The `{token}` of the session routes: the token, or the session's id from GET /sessions. */
const SessionParam = (): MethodDecorator =>
  ApiParam({
    name: 'token',
    description: "The session's token (ses_…), or its id (listed by GET /sessions); anything else is INVALID_SESSION",
    schema: { type: 'string', pattern: SESSION_TOKEN_OR_ID.source },
  });

const EVENT_LIST = Object.keys(CHAT_EVENTS).join(', ');

/** The stream's media type: a string to OpenAPI 3.0, with the data schema of each event as an extension. */
const SSE_MEDIA = {
  schema: { type: 'string' as const, description: `Server-sent events: ${EVENT_LIST}` },
  'x-sse-events': Object.fromEntries(
    Object.entries(CHAT_EVENTS).map(([event, model]) => [event, { $ref: getSchemaPath(model) }]),
  ),
};

@ApiTags('chat')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('sessions')
export class ChatController {
  constructor(
    private readonly sessions: ChatSessionsService,
    private readonly turns: ChatTurnService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a chat session over chosen sites (and tools): answers its token' })
  @ApiCreatedResponse({ type: CreatedSessionDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'PERMISSION_DENIED')
  create(@CurrentScope() scope: Scope, @Body() body: CreateSessionDto): Promise<CreatedSessionDto> {
    return this.sessions.create(scope, body);
  }

  @Get()
  @ApiOperation({
    summary:
      "The caller's own live sessions in this scope (X-Workspace-Id's workspace, or personal), newest first; " +
      'no tokens (only their hashes are kept): open one by its id in place of the token',
  })
  @ApiOkResponse({ type: SessionPageDto })
  @ApiErrors(...TERMS_GATED_ERRORS)
  list(@CurrentScope() scope: Scope, @Query() query: ListQueryDto): Promise<SessionPageDto> {
    return this.sessions.list(scope, pageQuery(query));
  }

  @Get(':token')
  @ApiOperation({ summary: 'The session with its messages' })
  @SessionParam()
  @ApiOkResponse({ type: SessionDetailDto })
  @ApiErrors(...TERMS_GATED_ERRORS, ...SESSION_ERRORS)
  get(@CurrentUser() auth: AuthUser, @Param('token') token: string): Promise<SessionDetailDto> {
    return this.sessions.describeByToken(auth.user.id, token);
  }

  @Delete(':token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete the session and its messages' })
  @SessionParam()
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(...TERMS_GATED_ERRORS, ...SESSION_ERRORS)
  remove(@CurrentUser() auth: AuthUser, @Param('token') token: string): Promise<void> {
    return this.sessions.removeByToken(auth.user.id, token);
  }

  /**
   * A chat turn, as SSE (`Accept: text/event-stream`) or one JSON answer (see ChatTurnService.send).
   * Its session and messages are read during authentication (@PrefetchOnAuth).
   */
  @Post(':token/messages')
  @PrefetchOnAuth(CHAT_TURN_PREFETCH)
  @ApiOperation({ summary: 'Send a message; streamed as SSE with Accept: text/event-stream' })
  @SessionParam()
  @ApiExtraModels(ChatReplyDto, ...Object.values(CHAT_EVENTS))
  @ApiOkResponse({
    description:
      'The turn. JSON: one answer when it ends. SSE (Accept: text/event-stream): events as they happen, ' +
      `each \`event: <name>\` and one \`data:\` line of JSON (${EVENT_LIST}): context when earlier messages ` +
      "were condensed to fit the model's context (CHAT_CONTEXT_BUDGET_TOKENS; the session keeps them all), " +
      'text deltas, each tool_call followed by its tool_result, then done, or error (the error body; the ' +
      'stream then ends). x-sse-events names the data schema of each event; a client ignores an event it ' +
      'does not know (more may come).',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ChatReplyDto) } },
      'text/event-stream': SSE_MEDIA,
    },
  })
  @ApiErrors(...TERMS_GATED_ERRORS, ...SESSION_ERRORS, 'NO_CREDITS', 'MODEL_ERROR', 'CHAT_TIMEOUT')
  send(
    @CurrentUser() auth: AuthUser,
    @Param('token') token: string,
    @Body() body: SendMessageDto,
    @Req() req: ApiRequest,
    @Res() res: ApiReply,
  ): Promise<void> {
    return this.turns.send(auth, token, body.content, req, res);
  }
}
