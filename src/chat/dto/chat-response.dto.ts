import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ErrorBodyDto } from '../../common/api-errors.js';
import { anyJson, PageDto } from '../../common/api-schemas.js';
import { SITE_SCOPES, type SiteScope } from '../../sites/scopes.js';
import type {
  ContextNotice,
  MessageResponse,
  SessionResponse,
  SessionSiteResponse,
  SessionSummaryResponse,
} from '../chat-responses.js';
import type { ToolCallRecord } from '../chat.entities.js';

export class SessionSiteResponseDto implements SessionSiteResponse {
  @ApiProperty({ format: 'uuid' })
  siteId: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ type: [String], description: 'The tools the chat may use' })
  tools: string[];

  @ApiProperty({ enum: SITE_SCOPES, isArray: true, description: 'The least scopes those tools need' })
  scopes: SiteScope[];

  @ApiPropertyOptional({
    enum: SITE_SCOPES,
    isArray: true,
    description: 'OAuth sites connected with fewer scopes than needed (or to reconnect): what is missing',
  })
  missingScopes?: SiteScope[];

  @ApiPropertyOptional({ example: '/api/vault/sites/{id}/oauth/start', description: 'Where to connect again' })
  connectPath?: string;
}

export class SessionResponseDto implements SessionResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, nullable: true })
  title: string | null;

  @ApiProperty({ type: [SessionSiteResponseDto] })
  sites: SessionSiteResponseDto[];

  @ApiProperty({ enum: SITE_SCOPES, isArray: true })
  scopes: SiteScope[];

  @ApiProperty({ format: 'date-time' })
  expiresAt: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class SessionSummarySiteDto {
  @ApiProperty({ format: 'uuid' })
  siteId: string;

  @ApiProperty({ type: [String], nullable: true, description: "The chosen tools; null: all of the site's tools" })
  tools: string[] | null;
}

/**
 * A session in the caller's list. It has no token: only the token's hash is kept, so the session's
 * id stands in for it in GET/DELETE /sessions/{token} and POST /sessions/{token}/messages.
 */
export class SessionSummaryDto implements SessionSummaryResponse {
  @ApiProperty({ format: 'uuid', description: 'Usable in place of the token in the other session routes' })
  id: string;

  @ApiProperty({ type: String, nullable: true })
  title: string | null;

  @ApiProperty({ type: [SessionSummarySiteDto] })
  sites: SessionSummarySiteDto[];

  @ApiProperty({ type: 'integer', minimum: 0 })
  messageCount: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Null before the first turn' })
  lastMessageAt: string | null;

  @ApiProperty({ format: 'date-time' })
  expiresAt: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class SessionPageDto extends PageDto(SessionSummaryDto) {}

/** A new session: its token is the session's key in the other chat routes. */
export class CreatedSessionDto extends SessionResponseDto {
  @ApiProperty({
    example: 'ses_Vq3oXm0n4c1uS1bXo2n9QbU7lY8d0kJ1c5wQe6rT2aZ',
    description: 'The session token (ses_ and 43 base64url characters)',
    pattern: '^ses_[A-Za-z0-9_-]{43}$',
  })
  token: string;
}

export class ChatUsageDto {
  @ApiProperty({ type: 'integer' })
  inputTokens: number;

  @ApiProperty({ type: 'integer' })
  outputTokens: number;

  @ApiProperty({ type: 'integer' })
  credits: number;
}

export class ToolCallRecordDto implements ToolCallRecord {
  @ApiProperty({ description: "The model's tool-use id" })
  id: string;

  @ApiProperty({ description: "The site's name" })
  site: string;

  @ApiProperty()
  tool: string;

  @ApiProperty(anyJson("The tool's input"))
  input: unknown;

  @ApiProperty()
  ok: boolean;

  @ApiPropertyOptional(
    anyJson(
      "ok: the site's JSON result; an MCP server's tool: its `{content, structuredContent?}` as the server sent it",
    ),
  )
  result?: unknown;

  @ApiPropertyOptional({ description: 'Not ok: `CODE: message`' })
  error?: string;
}

export class TextPartDto {
  @ApiProperty({ enum: ['text'] })
  type: 'text';

  @ApiProperty({ description: 'The text one model call streamed' })
  text: string;
}

export class ToolCallPartDto extends ToolCallRecordDto {
  @ApiProperty({ enum: ['tool_call'] })
  type: 'tool_call';
}

const PARTS = { text: TextPartDto, tool_call: ToolCallPartDto };

@ApiExtraModels(...Object.values(PARTS))
export class MessageResponseDto implements MessageResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['user', 'assistant'] })
  role: 'user' | 'assistant';

  @ApiProperty()
  content: string;

  @ApiPropertyOptional({ type: [ToolCallRecordDto], description: 'Assistant messages' })
  toolCalls?: ToolCallRecordDto[];

  @ApiPropertyOptional({
    type: 'array',
    items: {
      oneOf: Object.values(PARTS).map((model) => ({ $ref: getSchemaPath(model) })),
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries(Object.entries(PARTS).map(([type, model]) => [type, getSchemaPath(model)])),
      },
    },
    description:
      'Assistant messages: the reply in the order it happened, as the stream showed it: the text of each ' +
      'model call, and each tool call with its result or error (the same calls as toolCalls). `content` is ' +
      'the texts joined by a blank line',
  })
  parts?: Array<TextPartDto | ToolCallPartDto>;

  @ApiPropertyOptional({ type: ChatUsageDto, description: 'Assistant messages' })
  usage?: ChatUsageDto;

  @ApiPropertyOptional({
    description:
      'Assistant messages: true when the turn was ended before the model was done (the balance ran out, ' +
      'or the conversation passed MAX_CHAT_INPUT_BYTES); the reply holds what was streamed before',
  })
  cut?: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class SessionDetailDto extends SessionResponseDto {
  @ApiProperty({ type: [MessageResponseDto], description: 'Oldest first' })
  messages: MessageResponseDto[];
}

/**
 * A turn whose model calls were sent the conversation condensed to fit CHAT_CONTEXT_BUDGET_TOKENS: the
 * session keeps and answers every message; the model saw the recent ones and placeholders or a note for
 * the rest.
 */
export class ChatContextEventDto implements ContextNotice {
  @ApiProperty({ enum: [true] })
  condensed: true;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Earlier exchanges (a message and its reply) left out' })
  droppedTurns: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Large tool results of earlier exchanges the model was sent as a placeholder',
  })
  omittedResults: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: "This turn's tool results cut short to fit" })
  cutResults: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: "The model call's estimated size in tokens" })
  estimatedTokens: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'CHAT_CONTEXT_BUDGET_TOKENS' })
  budgetTokens: number;
}

/** The JSON answer of a chat turn (without Accept: text/event-stream). */
export class ChatReplyDto {
  @ApiProperty({ type: MessageResponseDto, description: "The assistant's reply" })
  message: MessageResponseDto;

  @ApiPropertyOptional({
    type: ChatContextEventDto,
    description: "Present when earlier context was condensed to fit the model's context (the stream's `context`)",
  })
  context?: ChatContextEventDto;
}

// The SSE events of a streamed chat turn: `event: <name>` and one `data:` line of JSON each.

export class ChatTextEventDto {
  @ApiProperty({ description: 'The next piece of the reply' })
  delta: string;
}

export class ChatToolCallEventDto {
  @ApiProperty()
  id: string;

  @ApiProperty()
  site: string;

  @ApiProperty()
  tool: string;

  @ApiProperty(anyJson("The tool's input"))
  input: unknown;
}

export class ChatToolResultEventDto {
  @ApiProperty({ description: 'The id of its tool_call' })
  id: string;

  @ApiProperty()
  ok: boolean;

  @ApiPropertyOptional(
    anyJson(
      "ok: the site's JSON result; an MCP server's tool: its `{content, structuredContent?}` as the server sent it",
    ),
  )
  result?: unknown;

  @ApiPropertyOptional({ description: 'Not ok: `CODE: message`' })
  error?: string;
}

export class ChatDoneEventDto {
  @ApiProperty({ format: 'uuid', description: "The saved reply's id" })
  messageId: string;

  @ApiPropertyOptional({ type: ChatUsageDto })
  usage?: ChatUsageDto;
}

/**
 * Each SSE event of a streamed turn and its data: context (when earlier context was condensed, before
 * the model call it concerns), text*, tool_call/tool_result pairs, then done or error.
 */
export const CHAT_EVENTS = {
  context: ChatContextEventDto,
  text: ChatTextEventDto,
  tool_call: ChatToolCallEventDto,
  tool_result: ChatToolResultEventDto,
  done: ChatDoneEventDto,
  error: ErrorBodyDto,
};

export type ChatEvents = { [E in keyof typeof CHAT_EVENTS]: InstanceType<(typeof CHAT_EVENTS)[E]> };
