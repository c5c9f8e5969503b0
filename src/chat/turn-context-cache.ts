import { Injectable } from '@nestjs/common';
import type { ModelMessage } from '../../workflows/contracts.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { jsonBytes, WHOLE_HISTORY_MESSAGES } from './chat-context.js';
import type { TurnContext } from './chat-responses.js';
import type { ChatMessageEntity, ChatSessionEntity } from './chat.entities.js';
import type { TurnVersion } from './turn-check.js';

/** Sessions whose turn context a process keeps at most, and the bytes (as JSON) they may take. */
export const TURN_CONTEXT_CACHE_ENTRIES = 2_000;
export const TURN_CONTEXT_CACHE_BYTES = 64 * 1024 * 1024;

/** A message as the cache keeps it: what the turn read gives, and its brief for when it is older. */
interface CachedMessage {
  role: ChatMessageEntity['role'];
  content: string;
  modelMessages: ModelMessage[] | null;
  /** What it is sent as once older than the newest WHOLE_HISTORY_MESSAGES (null: the same). */
  modelBrief: ModelMessage[] | null;
}

interface CachedTurn {
  session: ChatSessionEntity;
  sites: SiteEntity[];
  messages: CachedMessage[];
  version: TurnVersion;
  /** The highest `seq` of the messages kept (0 for none). */
  lastSeq: bigint;
  bytes: number;
}

/** A cached turn context, and the version its next turn checks (turn-check.ts). */
export interface CachedContext {
  context: TurnContext;
  version: TurnVersion;
}

/** A turn's two saved messages, as the save answered them. */
export interface SavedMessages {
  userSeq: string;
  content: string;
  reply: Pick<ChatMessageEntity, 'seq' | 'content' | 'modelMessages' | 'modelBrief'>;
}

/**
 * The turn contexts of this process's recent sessions (session, sites, history, and the version they
 * were read at), so that a session's next turn checks its version in the statement that holds its
 * first model call's credits instead of reading it all again (ChatTurnService). Bounded in entries
 * and bytes, least recently used first out. A context is only used after its version was checked:
 * a turn served by another process, a change of the session, its sites or the membership, all read
 * again. Messages are only appended here when their `seq` comes after every message kept: the check
 * compares the count of messages too, so a set kept here that misses one never passes it.
 */
@Injectable()
export class TurnContextCache {
  private readonly entries = new Map<string, CachedTurn>();
  private bytes = 0;

  /** The context of `key` (a user and a session key), the most recently used now; undefined when none or expired. */
  get(key: string): CachedContext | undefined {
    const entry = this.live(key);
    if (entry === undefined) {
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    const older = entry.messages.length - WHOLE_HISTORY_MESSAGES;
    return {
      context: {
        session: entry.session,
        sites: entry.sites,
        history: entry.messages.map((m, i) => ({
          role: m.role,
          content: m.content,
          modelMessages: i < older ? (m.modelBrief ?? m.modelMessages) : m.modelMessages,
        })),
      },
      version: entry.version,
    };
  }

  /** Whether `key` has a context kept (an expired one is dropped), without making it the most recently used. */
  has(key: string): boolean {
    return this.live(key) !== undefined;
  }

  /** The entry of `key`, unless its session has expired (then dropped). */
  private live(key: string): CachedTurn | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.session.expiresAt.getTime() <= Date.now()) {
      this.drop(key);
      return undefined;
    }
    return entry;
  }

  /** Keeps a context just read (its history as ChatRepository.turnRows reads it) at its version. */
  put(key: string, context: TurnContext, version: TurnVersion): void {
    this.drop(key);
    const lastSeq = BigInt(version.messages.slice(version.messages.indexOf(':') + 1));
    const messages = context.history.map((m) => ({
      role: m.role,
      content: m.content,
      modelMessages: m.modelMessages,
      modelBrief: m.modelBrief ?? null,
    }));
    const bytes = jsonBytes(messages) + jsonBytes(context.sites);
    this.store(key, { session: context.session, sites: context.sites, messages, version, lastSeq, bytes });
  }

  /**
   * A turn of `key` saved: its messages are appended when they come after every message kept (and
   * the version moves with them); otherwise the context is dropped, and the next turn reads it.
   */
  saved(key: string, saved: SavedMessages): void {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      return;
    }
    if (BigInt(saved.userSeq) <= entry.lastSeq) {
      this.drop(key);
      return;
    }
    const added: CachedMessage[] = [
      { role: 'user', content: saved.content, modelMessages: null, modelBrief: null },
      {
        role: 'assistant',
        content: saved.reply.content,
        modelMessages: saved.reply.modelMessages,
        modelBrief: saved.reply.modelBrief,
      },
    ];
    this.drop(key);
    const messages = [...entry.messages, ...added];
    const count = messages.length;
    this.store(key, {
      ...entry,
      messages,
      version: { ...entry.version, messages: `${count}:${saved.reply.seq}` },
      lastSeq: BigInt(saved.reply.seq),
      bytes: entry.bytes + jsonBytes(added),
    });
  }

  drop(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }

  private store(key: string, entry: CachedTurn): void {
    // One context may take an eighth of the bytes at most: a few long sessions do not push out the rest.
    if (entry.bytes > TURN_CONTEXT_CACHE_BYTES / 8) {
      return;
    }
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const [oldest, kept] of this.entries) {
      if (this.entries.size <= TURN_CONTEXT_CACHE_ENTRIES && this.bytes <= TURN_CONTEXT_CACHE_BYTES) {
        break;
      }
      this.entries.delete(oldest);
      this.bytes -= kept.bytes;
    }
  }
}
