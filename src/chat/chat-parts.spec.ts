import { describe, expect, it } from '@jest/globals';
import type { ModelMessage } from '../../workflows/contracts.js';
import { answeredParts, contentOf, derivedParts } from './chat-parts.js';
import type { ToolCallRecord } from './chat.entities.js';

const call: ToolCallRecord = { id: 'tu_1', site: 'Notes', tool: 'list_notes', input: {}, ok: true, result: { n: 1 } };
const failed: ToolCallRecord = { id: 'tu_2', site: 'Notes', tool: 'add_note', input: {}, ok: false, error: 'E: no' };

/** A turn "text, tool call, text" as the model messages of its row keep it. */
const turn: ModelMessage[] = [
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me use a tool.' },
      { type: 'tool_use', id: 'tu_1', name: 'notes__list_notes', input: {} },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: '{"n":1}' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'All done.' }] },
];

describe('chat reply parts', () => {
  it("a row without parts reads them from its model messages, in the turn's order, each call's text apart", () => {
    expect(derivedParts('Let me use a tool.All done.', [call], turn)).toEqual([
      { type: 'text', text: 'Let me use a tool.' },
      { type: 'tool_call', id: 'tu_1' },
      { type: 'text', text: 'All done.' },
    ]);
  });

  it("a call's text blocks read as one part, as they streamed; a call without text adds none", () => {
    const blocks: ModelMessage[] = [
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'tu_1', name: 'notes__list_notes', input: {} },
          { type: 'tool_use', id: 'tu_2', name: 'notes__add_note', input: {} },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'One, ' },
          { type: 'text', text: 'two.' },
        ],
      },
    ];
    expect(derivedParts('One, two.', [call, failed], blocks)).toEqual([
      { type: 'tool_call', id: 'tu_1' },
      { type: 'tool_call', id: 'tu_2' },
      { type: 'text', text: 'One, two.' },
    ]);
  });

  it('a row without model messages reads as its text, then its tool calls; a call no message names comes last', () => {
    expect(derivedParts('Answer.', [call], null)).toEqual([
      { type: 'text', text: 'Answer.' },
      { type: 'tool_call', id: 'tu_1' },
    ]);
    expect(derivedParts('', [call], null)).toEqual([{ type: 'tool_call', id: 'tu_1' }]);
    expect(derivedParts('Done.', [call, failed], turn.slice(0, 2))).toEqual([
      { type: 'text', text: 'Let me use a tool.' },
      { type: 'tool_call', id: 'tu_1' },
      { type: 'tool_call', id: 'tu_2' },
    ]);
  });

  it("the answer completes each tool call part from the row's records, result or error", () => {
    expect(
      answeredParts(
        [
          { type: 'text', text: 'Trying.' },
          { type: 'tool_call', id: 'tu_2' },
          { type: 'tool_call', id: 'tu_1' },
        ],
        [call, failed],
      ),
    ).toEqual([
      { type: 'text', text: 'Trying.' },
      { type: 'tool_call', ...failed },
      { type: 'tool_call', ...call },
    ]);
  });

  it("a reply's content is its texts apart, never glued", () => {
    expect(
      contentOf([
        { type: 'text', text: 'Let me use a tool.' },
        { type: 'tool_call', id: 'tu_1' },
        { type: 'text', text: 'All done.' },
      ]),
    ).toBe('Let me use a tool.\n\nAll done.');
  });
});
