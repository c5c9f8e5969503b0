import type { EnvReader } from './env-reader.js';

/** The chat's settings: a turn's time cap, turns in progress per user, and what a turn may send the model. */
export interface ChatSettings {
  /** The whole turn's cap, model and tools (CHAT_TIMEOUT_MS; CHAT_TIMEOUT beyond). */
  chatTimeoutMs: number;
  /** Chat turns one user may have in progress at once (RATE_LIMITED beyond), across every API process. */
  maxConcurrentChatTurns: number;
  /** Bytes of conversation (its JSON) one chat turn may send to the model in one call. */
  maxChatInputBytes: number;
  /**
   * The estimated tokens a chat turn's model call may take (CHAT_CONTEXT_BUDGET_TOKENS): system prompt,
   * tools and conversation. A longer conversation is condensed to fit (src/chat/chat-context.ts).
   */
  chatContextBudgetTokens: number;
}

/** Reads CHAT_TIMEOUT_MS, MAX_CONCURRENT_CHAT_TURNS, MAX_CHAT_INPUT_BYTES and CHAT_CONTEXT_BUDGET_TOKENS. */
export function readChatSettings(reader: EnvReader): ChatSettings {
  return {
    chatTimeoutMs: reader.int('CHAT_TIMEOUT_MS', 90_000, 1, 3_600_000),
    maxConcurrentChatTurns: reader.int('MAX_CONCURRENT_CHAT_TURNS', 2, 1, 100),
    maxChatInputBytes: reader.int('MAX_CHAT_INPUT_BYTES', 1_000_000, 10_000, 1_500_000),
    chatContextBudgetTokens: reader.int('CHAT_CONTEXT_BUDGET_TOKENS', 150_000, 5_000, 1_000_000),
  };
}
