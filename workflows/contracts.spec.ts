import { describe, expect, it } from '@jest/globals';
import { defineSearchAttributeKey } from '@temporalio/common';
import { endsRun, type ModelContentBlock, SEARCH_ATTRIBUTE_TYPES, SEARCH_ATTRIBUTES } from './contracts.js';

const toolUse: ModelContentBlock = { type: 'tool_use', id: 'tu_1', name: 'site__search', input: {} };
const text: ModelContentBlock = { type: 'text', text: 'done' };

describe('endsRun (which model turn records the run as completed)', () => {
  it('a turn that asks for a tool does not end the run', () => {
    expect(endsRun({ stopReason: 'tool_use', content: [text, toolUse] }, false)).toBe(false);
  });

  it('a turn that stops without a tool ends it', () => {
    expect(endsRun({ stopReason: 'end_turn', content: [text] }, false)).toBe(true);
    expect(endsRun({ stopReason: 'max_tokens', content: [text] }, false)).toBe(true);
  });

  it('tool_use as the stop reason without any tool_use block ends it (nothing to call)', () => {
    expect(endsRun({ stopReason: 'tool_use', content: [text] }, false)).toBe(true);
  });

  it('the last allowed turn ends it whatever the model asks for', () => {
    expect(endsRun({ stopReason: 'tool_use', content: [toolUse] }, true)).toBe(true);
  });
});

describe('SEARCH_ATTRIBUTES', () => {
  it("are the keys @temporalio/common's defineSearchAttributeKey makes, one per registered attribute", () => {
    for (const key of Object.values(SEARCH_ATTRIBUTES)) {
      expect(key).toEqual(defineSearchAttributeKey(key.name, SEARCH_ATTRIBUTE_TYPES[key.name]!));
    }
    expect(Object.values(SEARCH_ATTRIBUTES).map((k) => k.name)).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES));
  });
});
