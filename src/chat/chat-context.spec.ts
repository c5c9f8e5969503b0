import { describe, expect, it } from '@jest/globals';
import type { ModelMessage } from '../../workflows/contracts.js';
import {
  briefOf,
  condenseConversation,
  droppedNote,
  jsonBytes,
  LARGE_RESULT_BYTES,
  messageBudgetBytes,
  omittedResult,
  RECENT_EXCHANGES,
} from './chat-context.js';

/** One exchange: the user's words, a tool call answered with `resultBytes` of text, the reply. */
function exchange(n: number, resultBytes: number): ModelMessage[] {
  return [
    { role: 'user', content: `question ${n}` },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `Looking ${n}.` },
        { type: 'tool_use', id: `toolu_${n}`, name: 'notes__get_note', input: { id: n } },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: 'x'.repeat(resultBytes) }],
    },
    { role: 'assistant', content: [{ type: 'text', text: `Answer ${n}.` }] },
  ];
}

function conversation(exchanges: number, resultBytes: number): ModelMessage[] {
  const messages = Array.from({ length: exchanges }, (_, i) => exchange(i, resultBytes)).flat();
  messages.push({ role: 'user', content: 'the last question' });
  return messages;
}

/** The tool_result contents of the messages, in order. */
function results(messages: ModelMessage[]): string[] {
  return messages.flatMap((m) =>
    Array.isArray(m.content) ? m.content.flatMap((b) => (b.type === 'tool_result' ? [b.content as string] : [])) : [],
  );
}

/** Every tool_use has its tool_result in the next message, and every tool_result its tool_use before it. */
function pairsIntact(messages: ModelMessage[]): boolean {
  return messages.every((m, i) => {
    const blocks = Array.isArray(m.content) ? m.content : [];
    const uses = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    const answered = (messages[i + 1]?.content ?? []) as Array<{ type: string; tool_use_id?: string }>;
    const ids = Array.isArray(answered) ? answered.map((b) => b.tool_use_id) : [];
    const replies = blocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    const before = messages[i - 1]?.content;
    const asked = Array.isArray(before) ? before.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
    return uses.every((id) => ids.includes(id)) && replies.every((id) => asked.includes(id));
  });
}

describe('condenseConversation (the chat context policy)', () => {
  it.each([
    ['fits as it is', 0],
    ['with placeholders', 3 * 20_000],
    ['with exchanges dropped', 150_000],
    ['with results cut', 199_000],
  ])('answers the JSON bytes of the messages it sends (%s)', (_case, less) => {
    const messages = conversation(10, 20_000);
    const condensed = condenseConversation(messages, jsonBytes(messages) - less);
    expect(condensed.bytes).toBe(jsonBytes(condensed.messages));
  });

  it('sends a conversation that fits as it is', () => {
    const messages = conversation(5, 2000);
    const condensed = condenseConversation(messages, jsonBytes(messages));
    expect(condensed).toMatchObject({ droppedTurns: 0, omittedResults: 0, cutResults: 0 });
    expect(condensed.messages).toEqual(messages);
  });

  it('replaces the large tool results older than the recent exchanges first, oldest first, and changes nothing given', () => {
    const messages = conversation(10, 20_000);
    const copy = structuredClone(messages);
    const budget = jsonBytes(messages) - 3 * 20_000;
    const condensed = condenseConversation(messages, budget);
    expect(messages).toEqual(copy);
    expect(condensed.droppedTurns).toBe(0);
    expect(condensed.omittedResults).toBe(4);
    expect(condensed.bytes).toBeLessThanOrEqual(budget);
    const shown = results(condensed.messages);
    expect(shown.slice(0, 4)).toEqual([0, 1, 2, 3].map(() => omittedResult(20_002, 'notes__get_note')));
    expect(shown.slice(4).every((r) => r.length === 20_000)).toBe(true);
    expect(shown[0]).toBe('[tool result of 20 KB omitted: notes__get_note]');
  });

  it('then drops the oldest whole exchanges, keeping pairs whole and a user message first, with a note', () => {
    const messages = conversation(200, 60_000);
    const budget = 150_000;
    const condensed = condenseConversation(messages, budget);
    expect(condensed.bytes).toBeLessThanOrEqual(budget);
    expect(condensed.droppedTurns).toBeGreaterThan(0);
    expect(condensed.omittedResults).toBeGreaterThan(0);
    const first = condensed.messages[0]!;
    expect(first.role).toBe('user');
    expect(first.content).toEqual([
      { type: 'text', text: droppedNote(condensed.droppedTurns) },
      { type: 'text', text: `question ${condensed.droppedTurns}` },
    ]);
    expect(pairsIntact(condensed.messages)).toBe(true);
    expect(condensed.messages.length).toBe(messages.length - 4 * condensed.droppedTurns);
    // The recent exchanges keep their results whole; the new message is last, as it was.
    const shown = results(condensed.messages);
    expect(shown.slice(-(RECENT_EXCHANGES - 1)).every((r) => r.length === 60_000)).toBe(true);
    expect(condensed.messages[condensed.messages.length - 1]).toEqual({ role: 'user', content: 'the last question' });
    // Roles alternate.
    expect(condensed.messages.every((m, i) => i === 0 || m.role !== condensed.messages[i - 1]!.role)).toBe(true);
  });

  it('drops old exchanges before touching the recent ones, and the recent ones only when it must', () => {
    const messages = conversation(6, 30_000);
    const roomy = condenseConversation(messages, 2 * 30_000 + 4_000);
    expect(results(roomy.messages).filter((r) => r.length === 30_000)).toHaveLength(2);
    expect(roomy).toMatchObject({ droppedTurns: 0, omittedResults: 4 });
    // Older exchanges all gone: the recent ones' results give way before the recent exchanges do.
    const tight = condenseConversation(messages, 8_000);
    expect(tight.bytes).toBeLessThanOrEqual(8_000);
    expect(tight.droppedTurns).toBe(4);
    expect(results(tight.messages)).toEqual([4, 5].map(() => omittedResult(30_002, 'notes__get_note')));
    const tightest = condenseConversation(messages, 300);
    expect(tightest.droppedTurns).toBe(6);
    expect(tightest.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: droppedNote(6) },
          { type: 'text', text: 'the last question' },
        ],
      },
    ]);
  });

  it('a current turn larger than the budget on its own: its earlier results are omitted, its last ones cut to fit', () => {
    const messages: ModelMessage[] = [
      ...exchange(1, 50_000).slice(0, 3),
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'notes__get_note', input: {} },
          { type: 'tool_use', id: 'toolu_b', name: 'notes__get_note', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'a'.repeat(60_000) },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'b'.repeat(60_000) },
        ],
      },
    ];
    const condensed = condenseConversation(messages, 40_000);
    expect(condensed.bytes).toBeLessThanOrEqual(40_000);
    expect(condensed).toMatchObject({ droppedTurns: 0, omittedResults: 1, cutResults: 2 });
    const [omitted, a, b] = results(condensed.messages);
    expect(omitted).toBe('[tool result of 49 KB omitted: notes__get_note]');
    expect(a).toMatch(/^a{10000,}\n\[cut to fit the model's context: the result was 60000 bytes\]$/);
    expect(b).toMatch(/^b{10000,}\n\[cut to fit the model's context: the result was 60000 bytes\]$/);
    expect(pairsIntact(condensed.messages)).toBe(true);
  });

  it("leaves small tool results alone and never cuts the user's words", () => {
    const messages = conversation(3, LARGE_RESULT_BYTES - 10);
    const condensed = condenseConversation(messages, 100);
    expect(condensed.omittedResults).toBe(0);
    expect(condensed.droppedTurns).toBe(3);
    expect(condensed.messages).toHaveLength(1);
  });

  it("a reply's brief: its large tool results as placeholders (null when none), counted as omitted when sent", () => {
    const reply = exchange(1, 5000).slice(1);
    const brief = briefOf(reply)!;
    expect(results(brief)).toEqual(['[tool result of 5 KB omitted: notes__get_note]']);
    expect(brief[0]).toBe(reply[0]);
    expect(results(reply)[0]).toHaveLength(5000);
    expect(briefOf(exchange(2, 100).slice(1))).toBeNull();
    const messages: ModelMessage[] = [{ role: 'user', content: 'question 1' }, ...brief, ...exchange(2, 100)];
    messages.push({ role: 'user', content: 'the last question' });
    expect(condenseConversation(messages, jsonBytes(messages))).toMatchObject({ omittedResults: 1, droppedTurns: 0 });
  });

  it('the budget for messages is the setting less the system prompt, the tools and the envelope', () => {
    const tools = [{ name: 'notes__get_note', description: 'x'.repeat(1000), input_schema: {} }];
    expect(messageBudgetBytes(10_000, 'system', tools)).toBe(30_000 - 8 - jsonBytes(tools) - 256);
  });
});
