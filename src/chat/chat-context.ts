import type { ModelContentBlock, ModelMessage, ToolResultBlock } from '../../workflows/contracts.js';

/**
 * What the model is sent of a long chat session: the conversation condensed to fit a budget
 * (CHAT_CONTEXT_BUDGET_TOKENS). The session's rows keep every message whole; only the request changes.
 *
 * Tokens are estimated, not counted (the provider's count endpoint is a network call per turn):
 * BYTES_PER_TOKEN bytes of the request's JSON make a token, a cautious figure (English prose runs
 * nearer 4 bytes a token, dense JSON nearer 3), so the estimate errs on the large side.
 *
 * The policy, applied in order until the request fits (each step oldest first):
 *  1. tool results over LARGE_RESULT_BYTES in exchanges older than the last RECENT_EXCHANGES are
 *     replaced by a placeholder naming the tool and the size (the model can call the tool again);
 *  2. whole exchanges older than the recent ones are dropped (an exchange is a user's message and
 *     everything up to their next one: a tool_use never loses its tool_result);
 *  3. then the same two steps for the recent exchanges (the current one excepted);
 *  4. the current exchange's earlier large tool results get placeholders, and the results of its last
 *     tool message are cut to share what room is left.
 * Older than the newest WHOLE_HISTORY_MESSAGES, a reply is read with its large results already
 * placeholders (briefOf, kept beside it when it is saved).
 * Dropped exchanges leave a note in the first message kept, which is a user's message (as the Messages
 * API requires the conversation to start). The user's own words of the current turn are never cut.
 */
export const BYTES_PER_TOKEN = 3;

/** Exchanges (the current one included) whose tool results stay whole while older ones can go. */
export const RECENT_EXCHANGES = 3;

/** Tool results at most this long (bytes of their JSON) are never replaced: a placeholder saves little. */
export const LARGE_RESULT_BYTES = 1024;

/** What a request carries besides its system prompt, tools and messages (model, max_tokens, stream, keys). */
export const ENVELOPE_BYTES = 256;

/**
 * Messages of a session (its newest) a turn reads whole; older replies are read brief: their large tool
 * results already placeholders (the row's model_brief), so a turn's read stays small however long the
 * session. Ten exchanges.
 */
export const WHOLE_HISTORY_MESSAGES = 20;

/** Room kept for the note of dropped exchanges. */
const DROP_NOTE_ROOM = 160;

export interface CondensedConversation {
  messages: ModelMessage[];
  /** Whole exchanges (a user's message and its reply) left out, oldest first. */
  droppedTurns: number;
  /** Tool results replaced by a placeholder. */
  omittedResults: number;
  /** Tool results of the current turn cut short. */
  cutResults: number;
  /** The bytes of the messages' JSON as sent. */
  bytes: number;
}

/** The estimated tokens of a JSON text of this many bytes. */
export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

/** The bytes the messages may take: the budget less the system prompt, the tools and the envelope. */
export function messageBudgetBytes(budgetTokens: number, system: string, tools: unknown[]): number {
  return budgetTokens * BYTES_PER_TOKEN - jsonBytes(system) - jsonBytes(tools) - ENVELOPE_BYTES;
}

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** The placeholder the model reads in place of a large tool result. */
export function omittedResult(bytes: number, tool: string): string {
  return `[tool result of ${Math.max(1, Math.round(bytes / 1024))} KB omitted: ${tool}]`;
}

/** The note the first kept message starts with when earlier exchanges were dropped. */
export function droppedNote(turns: number): string {
  return (
    `[${turns} earlier exchange${turns === 1 ? '' : 's'} of this conversation ` +
    `${turns === 1 ? 'was' : 'were'} left out to fit the model's context]`
  );
}

/** Where each exchange starts: at a user's message that is not (only) tool results. */
function exchangeStarts(messages: ModelMessage[]): number[] {
  const starts: number[] = [];
  messages.forEach((message, i) => {
    const opens =
      message.role === 'user' &&
      (typeof message.content === 'string' || !message.content.some((b) => b.type === 'tool_result'));
    if (opens || i === 0) {
      starts.push(i);
    }
  });
  return starts;
}

/** The tool names of the conversation's tool uses, by id (for the placeholders). */
function toolNames(messages: ModelMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (Array.isArray(message.content)) {
      for (const block of message.content) {
        if (block.type === 'tool_use') {
          names.set(block.id, block.name);
        }
      }
    }
  }
  return names;
}

/**
 * The conversation as the model is sent it: within `budgetBytes` of JSON if the policy above can make
 * it so (the caller keeps its own size check for what cannot be condensed). Never changes its input.
 */
export function condenseConversation(input: ModelMessage[], budgetBytes: number): CondensedConversation {
  const messages = [...input];
  const sizes = messages.map(jsonBytes);
  // `[` `]` and a comma between messages.
  const total = (): number => sizes.reduce((sum, s) => sum + s, 0) + Math.max(1, messages.length) + 1;
  const names = toolNames(input);
  const starts = exchangeStarts(messages);
  const exchanges = starts.map((start, i) => ({ start, end: starts[i + 1] ?? messages.length, dropped: false }));
  const current = exchanges.length - 1;
  const recentFrom = Math.max(0, exchanges.length - RECENT_EXCHANGES);
  let dropped = 0;
  let cut = 0;
  const over = (): boolean => total() + (dropped > 0 ? DROP_NOTE_ROOM : 0) > budgetBytes;

  /** Placeholders for the large results of messages [from, to), oldest first, until the budget is met. */
  const omit = (from: number, to: number): void => {
    for (let i = from; i < to && over(); i += 1) {
      const message = messages[i]!;
      if (!Array.isArray(message.content) || !message.content.some(isLargeResult)) {
        continue;
      }
      const content = message.content.map((block) => {
        if (!isLargeResult(block)) {
          return block;
        }
        const placeholder = omittedResult(jsonBytes(block.content), names.get(block.tool_use_id) ?? 'a tool');
        return { ...block, content: placeholder };
      });
      messages[i] = { ...message, content };
      sizes[i] = jsonBytes(messages[i]);
    }
  };
  /** Drops exchanges [from, to), oldest first, until the budget is met. */
  const drop = (from: number, to: number): void => {
    for (let e = from; e < to && over(); e += 1) {
      const exchange = exchanges[e]!;
      exchange.dropped = true;
      dropped += 1;
      for (let i = exchange.start; i < exchange.end; i += 1) {
        sizes[i] = 0;
      }
    }
  };
  const exchangeRange = (from: number, to: number): [number, number] => [
    exchanges[from]?.start ?? messages.length,
    exchanges[to]?.start ?? messages.length,
  ];

  omit(...exchangeRange(0, recentFrom));
  drop(0, recentFrom);
  omit(...exchangeRange(recentFrom, current));
  drop(recentFrom, current);
  const own = exchanges[current];
  if (own !== undefined && over()) {
    const lastTools = lastToolMessage(messages, own.start);
    omit(own.start, lastTools ?? messages.length);
    if (lastTools !== undefined && over()) {
      cut += cutResults(messages, sizes, lastTools, total() + (dropped > 0 ? DROP_NOTE_ROOM : 0) - budgetBytes);
    }
  }

  const kept = messages.filter((_, i) => !exchanges.some((x) => x.dropped && i >= x.start && i < x.end));
  if (dropped > 0 && kept.length > 0) {
    kept[0] = withNote(kept[0]!, droppedNote(dropped));
  }
  // Placeholders read from briefs count too: the model did not see those results either.
  const omitted = kept.reduce((sum, m) => sum + placeholdersIn(m), 0);
  // Nothing dropped: every message is kept and `sizes` holds each one's JSON as sent, so total() is
  // the whole array's (no second serialisation of the conversation on every turn).
  const bytes = dropped > 0 ? jsonBytes(kept) : total();
  return { messages: kept, droppedTurns: dropped, omittedResults: omitted, cutResults: cut, bytes };
}

/**
 * A reply's model messages with each large tool result as its placeholder, or null when none is large
 * (the row's model_brief).
 */
export function briefOf(messages: ModelMessage[]): ModelMessage[] | null {
  const names = toolNames(messages);
  let changed = false;
  const brief = messages.map((message) => {
    if (!Array.isArray(message.content) || !message.content.some(isLargeResult)) {
      return message;
    }
    changed = true;
    const content = message.content.map((block) =>
      isLargeResult(block)
        ? { ...block, content: omittedResult(jsonBytes(block.content), names.get(block.tool_use_id) ?? 'a tool') }
        : block,
    );
    return { ...message, content };
  });
  return changed ? brief : null;
}

const PLACEHOLDER = /^\[tool result of \d+ KB omitted: [^\]]*\]$/;

function placeholdersIn(message: ModelMessage): number {
  return Array.isArray(message.content)
    ? message.content.filter(
        (b) => b.type === 'tool_result' && typeof b.content === 'string' && PLACEHOLDER.test(b.content),
      ).length
    : 0;
}

function isLargeResult(block: ModelContentBlock | ToolResultBlock): block is ToolResultBlock {
  return block.type === 'tool_result' && jsonBytes(block.content) > LARGE_RESULT_BYTES;
}

/** The index of the current exchange's last message of tool results, if it ends with one. */
function lastToolMessage(messages: ModelMessage[], from: number): number | undefined {
  for (let i = messages.length - 1; i >= from; i -= 1) {
    const content = messages[i]!.content;
    if (Array.isArray(content) && content.some((b) => b.type === 'tool_result')) {
      return i;
    }
  }
  return undefined;
}

/**
 * Cuts the large results of message `index` so it shrinks by `excess` bytes: each keeps an even share
 * of what is left, as the first bytes of its text with a note of its size. Returns how many were cut.
 */
function cutResults(messages: ModelMessage[], sizes: number[], index: number, excess: number): number {
  const message = messages[index]!;
  const blocks = message.content as Array<ModelContentBlock | ToolResultBlock>;
  const large = blocks.filter(isLargeResult);
  const room = large.reduce((sum, b) => sum + jsonBytes(b.content), 0) - excess;
  const share = Math.max(LARGE_RESULT_BYTES, Math.floor(room / Math.max(1, large.length)) - 128);
  const content = blocks.map((block) => {
    if (!isLargeResult(block)) {
      return block;
    }
    const text = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
    const note = `[cut to fit the model's context: the result was ${Buffer.byteLength(text, 'utf8')} bytes]`;
    return { ...block, content: `${prefixBytes(text, share)}\n${note}` };
  });
  messages[index] = { ...message, content };
  sizes[index] = jsonBytes(messages[index]);
  return large.length;
}

/** The longest prefix of `text` whose JSON string is at most `bytes` bytes (never a character cut in two). */
function prefixBytes(text: string, bytes: number): string {
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (jsonBytes(text.slice(0, mid)) <= bytes) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  let end = low;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) {
    end -= 1;
  }
  return text.slice(0, end);
}

/** A user's message that starts with a note. */
function withNote(message: ModelMessage, note: string): ModelMessage {
  const blocks =
    typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
  return { ...message, content: [{ type: 'text', text: note }, ...blocks] };
}
