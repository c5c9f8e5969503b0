import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { ModelMessage } from '../../workflows/contracts.js';

export interface SessionSite {
  siteId: string;
  /** Chosen tools; null = all of the site's tools. */
  tools: string[] | null;
}

@Entity({ name: 'chat_sessions' })
export class ChatSessionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'workspace_id', type: 'uuid', nullable: true })
  workspaceId: string | null;

  /** SHA-256 of the session token (the token itself is only in the creator's hands). */
  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  @Column({ type: 'jsonb' })
  sites: SessionSite[];

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

export interface ToolCallRecord {
  id: string;
  site: string;
  tool: string;
  input: unknown;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/**
 * A part of an assistant reply as its row keeps it (`chat_messages.parts`), in the order the turn
 * happened: the text one model call streamed, or a tool call, by its id in the row's `tool_calls`
 * (which holds its input and whole result once).
 */
export type StoredPart = { type: 'text'; text: string } | { type: 'tool_call'; id: string };

@Entity({ name: 'chat_messages' })
export class ChatMessageEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @Column({ type: 'bigint', insert: false, select: false })
  seq: string;

  @Column({ type: 'text' })
  role: 'user' | 'assistant';

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'tool_calls', type: 'jsonb', nullable: true })
  toolCalls: ToolCallRecord[] | null;

  /** The model-format messages of an assistant reply (tool uses and results), to replay the conversation. */
  @Column({ name: 'model_messages', type: 'jsonb', nullable: true })
  modelMessages: ModelMessage[] | null;

  /**
   * modelMessages with each large tool result as a placeholder (null: none was large): what later turns
   * read of a reply once it is no longer among the session's newest (chat-context.ts).
   */
  @Column({ name: 'model_brief', type: 'jsonb', nullable: true })
  modelBrief: ModelMessage[] | null;

  /**
   * An assistant reply's parts in the order the turn happened (texts and tool calls by id); null for
   * user messages and for replies saved before parts were kept (read as derivedParts makes them).
   */
  @Column({ type: 'jsonb', nullable: true })
  parts: StoredPart[] | null;

  @Column({ type: 'jsonb', nullable: true })
  usage: { inputTokens: number; outputTokens: number; credits: number } | null;

  /** An assistant reply the balance or the turn's input limit ended before the model was done. */
  @Column({ type: 'boolean', default: false })
  cut: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/**
 * What a turn sends the model of each earlier message: who wrote it, its text, its model messages;
 * and, read with the newest messages, their brief (what they are sent as once older; null: the same).
 */
export type HistoryMessage = Pick<ChatMessageEntity, 'role' | 'content' | 'modelMessages'> &
  Partial<Pick<ChatMessageEntity, 'modelBrief'>>;
