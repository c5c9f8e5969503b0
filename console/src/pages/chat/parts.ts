/**
 * A reply's parts, in the order they happened: the texts the model wrote and its tool calls. A saved
 * reply comes with them (`parts` of GET /api/sessions/{token}); a reply being streamed builds them
 * here from its events, into the same list, so that MessageView shows both the same way.
 */
import { type Schemas } from '../../api/client';

/** A tool call as the conversation shows it; `ok` is undefined while its result is on its way. */
export type ShownToolCall = Omit<Schemas['ToolCallPartDto'], 'ok'> & { ok?: boolean };

export type Part = Schemas['TextPartDto'] | ShownToolCall;

/** A `text` event: the delta joins the text part it follows, or starts one after a tool call. */
export function withText(parts: Part[], { delta }: Schemas['ChatTextEventDto']): Part[] {
  const last = parts[parts.length - 1];
  return last?.type === 'text'
    ? [...parts.slice(0, -1), { type: 'text', text: last.text + delta }]
    : [...parts, { type: 'text', text: delta }];
}

/** A `tool_call` event: a part of its own, running until its result comes. */
export function withToolCall(parts: Part[], call: Schemas['ChatToolCallEventDto']): Part[] {
  return [...parts, { type: 'tool_call', ...call }];
}

/** A `tool_result` event: completes the call it answers. */
export function withToolResult(parts: Part[], result: Schemas['ChatToolResultEventDto']): Part[] {
  return parts.map((part) => (part.type === 'tool_call' && part.id === result.id ? { ...part, ...result } : part));
}
