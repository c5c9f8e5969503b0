import { describe, expect, it } from '@jest/globals';
import { defineSearchAttributeKey } from '@temporalio/common';
import {
  endsRun,
  MAX_RUNS_PER_EXECUTION,
  type ModelContentBlock,
  runIdsToList,
  SEARCH_ATTRIBUTE_TYPES,
  SEARCH_ATTRIBUTES,
} from './contracts.js';

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

describe('runIdsToList (what AgentRunIds lists when a run starts)', () => {
  const ids = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`);

  it('lists the runs ran and the queued ones the execution will run, in order', () => {
    expect(runIdsToList(ids(1), ids(3, 1))).toEqual(ids(4));
    expect(runIdsToList(ids(5), [])).toEqual(ids(5));
  });

  it(`never more than an execution runs (${MAX_RUNS_PER_EXECUTION}), however long the queue: the value stays under Temporal's 2 KB`, () => {
    const listed = runIdsToList(ids(1), ids(999, 1));
    expect(listed).toEqual(ids(MAX_RUNS_PER_EXECUTION));
    // The value as Temporal sizes it (a keyword list, JSON): under the dev server's 2,048 bytes.
    expect(JSON.stringify(listed).length).toBeLessThan(2048);
    expect(runIdsToList(ids(MAX_RUNS_PER_EXECUTION), ids(50, 100))).toEqual(ids(MAX_RUNS_PER_EXECUTION));
  });
});
