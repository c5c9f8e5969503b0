import { describe, expect, it } from '@jest/globals';
import type { SiteEntity } from '../vault/site.entity.js';
import { buildRunTools } from './run-tools.js';

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
