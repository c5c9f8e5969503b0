import { describe, expect, it } from '@jest/globals';
import type { SiteEntity } from '../vault/site.entity.js';
import { MAX_TOOL_RESULT_BYTES, toolResultContent } from '../../workflows/contracts.js';
import { buildRunTools, keptResult } from './run-tools.js';

function site(id: string, name: string, tools: string[]): SiteEntity {
  return {
    id,
    manifest: {
      name,
      tools: tools.map((t) => ({
        name: t,
        description: `does ${t}`,
        input_schema: { type: 'object', properties: {}, required: [] },
      })),
    },
  } as unknown as SiteEntity;
}

describe('buildRunTools', () => {
  it('names tools <site>__<tool>, unique across sites of the same name, within 64 characters', () => {
    const tools = buildRunTools([
      site('a', 'Notes & Co', ['search', 'create']),
      site('b', 'Notes & Co', ['search']),
      site('c', 'X'.repeat(80), ['t'.repeat(60), 't'.repeat(60)]),
    ]);
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(['notes_co__search', 'notes_co__create', 'notes_co__search_2']);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
    expect(tools[2]).toMatchObject({ siteId: 'b', tool: 'search', siteName: 'Notes & Co' });
  });
});

describe('keptResult', () => {
  it('keeps an answer up to the limit as it is', () => {
    const answer = { notes: ['a'.repeat(MAX_TOOL_RESULT_BYTES - 20)] };
    expect(JSON.stringify(answer).length).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(keptResult(answer)).toEqual({ result: answer });
    expect(toolResultContent(keptResult(answer))).toBe(JSON.stringify(answer));
  });

  it('cuts a longer answer to the limit on a character boundary, with its length, and tells the model so', () => {
    // Three-byte characters: the limit falls inside one of them.
    const answer = { text: 'ab'.concat('€'.repeat(40_000)) };
    const bytes = Buffer.byteLength(JSON.stringify(answer));
    const kept = keptResult(answer);
    expect(kept.truncated).toBe(bytes);
    const text = kept.result as string;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_TOOL_RESULT_BYTES - 3);
    expect(text).not.toContain('\uFFFD');
    expect(JSON.stringify(answer).startsWith(text)).toBe(true);
    const content = toolResultContent(kept);
    expect(content.startsWith(text)).toBe(true);
    expect(content).toContain(`the answer was ${bytes} bytes`);
  });
});
