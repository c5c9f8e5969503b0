import type { ModelContentBlock, ModelMessage, ToolResultBlock } from '../../workflows/contracts.js';
import type { StoredPart, ToolCallRecord } from './chat.entities.js';

/** A part of a reply as the API answers it: a text, or a tool call with its result or error. */
export type MessagePart = { type: 'text'; text: string } | ({ type: 'tool_call' } & ToolCallRecord);

/** How a reply's texts join in its `content`: apart, as the parts show them, never glued. */
export const TEXT_SEPARATOR = '\n\n';

/** A reply's `content`: its text parts, in order, apart. */
export function contentOf(parts: StoredPart[]): string {
  return parts
    .filter((p): p is Extract<StoredPart, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join(TEXT_SEPARATOR);
}

/**
 * The parts of a row saved before parts were kept (its `parts` is null): from the model messages it
 * kept, which hold the turn in order (each call's text as it streamed, then its tool uses); a row
 * without them reads as its text, then its tool calls. A tool call no model message names comes last.
 */
export function derivedParts(
  content: string,
  toolCalls: ToolCallRecord[],
  modelMessages: ModelMessage[] | null,
): StoredPart[] {
  const parts: StoredPart[] = [];
  if (modelMessages === null) {
    if (content !== '') {
      parts.push({ type: 'text', text: content });
    }
  } else {
    for (const message of modelMessages.filter((m) => m.role === 'assistant')) {
      const blocks: Array<ModelContentBlock | ToolResultBlock> =
        typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      const text = blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');
      if (text !== '') {
        parts.push({ type: 'text', text });
      }
      for (const block of blocks) {
        if (block.type === 'tool_use') {
          parts.push({ type: 'tool_call', id: block.id });
        }
      }
    }
  }
  for (const call of toolCalls) {
    if (!parts.some((p) => p.type === 'tool_call' && p.id === call.id)) {
      parts.push({ type: 'tool_call', id: call.id });
    }
  }
  return parts;
}

/** The parts the API answers: each tool call part completed from the row's tool call record. */
export function answeredParts(parts: StoredPart[], toolCalls: ToolCallRecord[]): MessagePart[] {
  return parts.flatMap((part): MessagePart[] => {
    if (part.type === 'text') {
      return [part];
    }
    const call = toolCalls.find((c) => c.id === part.id);
    return call === undefined ? [] : [{ type: 'tool_call', ...call }];
  });
}
