import type { SiteScope } from '../sites/scopes.js';
import { answeredParts, derivedParts, type MessagePart } from './chat-parts.js';
import type { SiteEntity } from '../vault/site.entity.js';
import type { ChatMessageEntity, ChatSessionEntity, HistoryMessage, ToolCallRecord } from './chat.entities.js';

export interface SessionSiteResponse {
  siteId: string;
  name: string;
  tools: string[];
  /** The least scopes the chosen tools need. */
  scopes: SiteScope[];
  /** OAuth sites connected with fewer scopes than needed: what is missing and where to reconnect. */
  missingScopes?: SiteScope[];
  connectPath?: string;
}

export interface SessionResponse {
  id: string;
  title: string | null;
  sites: SessionSiteResponse[];
  scopes: SiteScope[];
  expiresAt: string;
  createdAt: string;
}

/** A session in the caller's list: no token (only its hash is kept); the id opens it instead. */
export interface SessionSummaryResponse {
  id: string;
  title: string | null;
  /** The chosen sites and tools (null: all of the site's tools), as created. */
  sites: Array<{ siteId: string; tools: string[] | null }>;
  messageCount: number;
  lastMessageAt: string | null;
  expiresAt: string;
  createdAt: string;
}

export interface MessageResponse {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  toolCalls?: ToolCallRecord[];
  /** Assistant messages: the reply's texts and tool calls in the order they happened (as streamed). */
  parts?: MessagePart[];
  usage?: { inputTokens: number; outputTokens: number; credits: number };
  /** Assistant messages: the turn was ended before the model was done (credits, or its input limit). */
  cut?: boolean;
  createdAt: string;
}

/** Where a turn's events go as they happen (the SSE stream, or nowhere for a JSON answer). */
/** What a turn's model call was sent of a conversation condensed to fit CHAT_CONTEXT_BUDGET_TOKENS. */
export interface ContextNotice {
  condensed: true;
  /** Earlier exchanges (a user's message and its reply) left out. */
  droppedTurns: number;
  /** Large tool results of earlier exchanges replaced by a placeholder. */
  omittedResults: number;
  /** Tool results of this turn cut short. */
  cutResults: number;
  /** The call's estimated size in tokens, and the budget. */
  estimatedTokens: number;
  budgetTokens: number;
}

export interface TurnSink {
  text(delta: string): void;
  /** Earlier context was condensed for the model call about to be made. */
  context(notice: ContextNotice): void;
  toolCall(call: { id: string; site: string; tool: string; input: unknown }): void;
  toolResult(result: { id: string; ok: boolean; result?: unknown; error?: string }): void;
}

/** A session ready for a turn: the session, its sites (in its order) and its messages so far. */
export interface TurnContext {
  session: ChatSessionEntity;
  sites: SiteEntity[];
  history: HistoryMessage[];
}

export function toMessageResponse(row: ChatMessageEntity): MessageResponse {
  const toolCalls = row.toolCalls ?? [];
  return {
    id: row.id,
    role: row.role,
    content: row.content,
    ...(row.role === 'assistant'
      ? {
          toolCalls,
          parts: answeredParts(row.parts ?? derivedParts(row.content, toolCalls, row.modelMessages), toolCalls),
          usage: row.usage ?? undefined,
          cut: row.cut === true,
        }
      : {}),
    createdAt: row.createdAt.toISOString(),
  };
}
