import { describe, expect, it } from '@jest/globals';
import type { SiteEntity } from '../vault/site.entity.js';
import { MAX_TOOL_RESULT_BYTES, mcpResultContent, toolResultContent } from '../../workflows/contracts.js';
import type { ManifestTool } from '../sites/manifest.js';
import { buildRunTools, keptResult } from './run-tools.js';

/** An MCP server as the vault stores it: protocol mcp, its tools' whole JSON Schemas in the snapshot. */
function mcpSite(id: string, name: string, tools: Array<Partial<ManifestTool> & { name: string }>): SiteEntity {
  return {
    id,
    protocol: 'mcp',
    url: 'https://mcp.example.com/mcp',
    mcp: {
      endpoint: 'https://mcp.example.com/mcp',
      protocolVersion: '2026-07-28',
      authorization: null,
      toolsFreshUntil: null,
    },
    manifest: {
      name,
      version: '1.0.0',
      description: '',
      server: { url: 'https://mcp.example.com/mcp' },
      auth: { type: 'bearer' },
      tools: tools.map((t) => ({
        description: '',
        input_schema: { type: 'object', properties: {} },
        ...t,
      })),
    },
  } as unknown as SiteEntity;
}

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
    // An agentsite tool: the schema as before, no protocol mark.
    expect(tools[0]!.input_schema).toEqual({ type: 'object', properties: {}, required: [] });
    expect(tools[0]).not.toHaveProperty('protocol');
  });

  it('maps MCP names the model cannot take into its pattern, unique, and keeps the server’s own name to call', () => {
    const long = `files.${'x'.repeat(120)}`;
    const tools = buildRunTools([
      mcpSite('m', 'Docs', [
        { name: 'files.read' },
        { name: 'files/read' },
        { name: 'files_read' },
        { name: 'résumé' },
        { name: long },
        { name: `${long}.v2` },
      ]),
    ]);
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 4)).toEqual(['docs__files_read', 'docs__files_read_2', 'docs__files_read_3', 'docs__r_sum_']);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
    // Mapped back: each model name stands for the server's own name, which the call goes out with.
    expect(tools.map((t) => t.tool)).toEqual(['files.read', 'files/read', 'files_read', 'résumé', long, `${long}.v2`]);
    expect(tools.every((t) => t.protocol === 'mcp' && t.siteId === 'm')).toBe(true);
  });

  it('gives the model an MCP tool’s whole JSON Schema, and its title with its description', () => {
    const schema = {
      type: 'object',
      $defs: { when: { type: 'string', format: 'date-time' } },
      properties: {
        query: { type: 'string', minLength: 1 },
        filters: { type: 'object', properties: { since: { $ref: '#/$defs/when' } }, additionalProperties: false },
        tags: { type: 'array', items: { enum: ['a', 'b'] } },
      },
      required: ['query'],
      additionalProperties: false,
    } as ManifestTool['input_schema'];
    const [search, plain] = buildRunTools([
      mcpSite('m', 'Docs', [
        { name: 'search', title: 'Search the docs', description: 'Full-text search', input_schema: schema },
        { name: 'ping' },
      ]),
    ]);
    expect(search!.input_schema).toEqual(schema);
    expect(search!.description).toBe('Search the docs: Full-text search (site: Docs)');
    // No description, no title: the site still says whose it is; no `required` is added.
    expect(plain!.description).toBe('(site: Docs)');
    expect(plain!.input_schema).toEqual({ type: 'object', properties: {} });
    // A declared dialect is left out (the model's API takes 2020-12 only, and refuses a request naming another).
    const [drafted] = buildRunTools([
      mcpSite('m', 'Docs', [
        { name: 'q', input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', ...schema } },
      ]),
    ]);
    expect(drafted!.input_schema).toEqual(schema);
  });

  it('shows the model the branches of a top-level oneOf/anyOf/allOf as properties (its API refuses them there)', () => {
    const [either] = buildRunTools([
      mcpSite('m', 'Docs', [
        {
          name: 'open',
          input_schema: {
            type: 'object',
            properties: { mode: { type: 'string' } },
            oneOf: [
              { properties: { id: { type: 'string' } }, required: ['id'] },
              { properties: { path: { type: 'string' } }, required: ['path'] },
            ],
            allOf: [{ properties: { mode: { enum: ['r', 'w'] }, lock: { type: 'boolean' } }, required: ['mode'] }],
          } as ManifestTool['input_schema'],
        },
      ]),
    ]);
    expect(either!.input_schema).toEqual({
      type: 'object',
      // The root's own `mode` wins; the alternatives' required fields stay alternatives (not required).
      properties: {
        mode: { type: 'string' },
        id: { type: 'string' },
        path: { type: 'string' },
        lock: { type: 'boolean' },
      },
      required: ['mode'],
    });
  });
});

describe('buildRunTools: the scope a call needs (approval policies wait on it)', () => {
  it("takes a manifest tool's scope when given, else guesses it from the name", () => {
    const agentsite = site('a', 'Notes', ['search_notes', 'create_note', 'delete_note', 'manage_users', 'frobnicate']);
    agentsite.manifest.tools[1]!.scope = 'admin';
    expect(buildRunTools([agentsite]).map((t) => [t.tool, t.scope])).toEqual([
      ['search_notes', 'read'],
      ['create_note', 'admin'],
      ['delete_note', 'delete'],
      ['manage_users', 'admin'],
      ['frobnicate', 'write'],
    ]);
  });

  it("takes an MCP tool's scope from its snapshot, else from its annotations, never from its name", () => {
    const tools = buildRunTools([
      mcpSite('m', 'Docs', [
        { name: 'files.delete', scope: 'read' },
        { name: 'get_file', annotations: { destructiveHint: true } },
        { name: 'remove_file', annotations: { readOnlyHint: true } },
        { name: 'list_files' },
      ]),
    ]);
    expect(tools.map((t) => [t.tool, t.scope])).toEqual([
      ['files.delete', 'read'],
      ['get_file', 'delete'],
      ['remove_file', 'read'],
      ['list_files', 'write'],
    ]);
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

describe('keptResult of an MCP tool (cut to the limit, still a result the model can read)', () => {
  const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
  type Kept = { content: Array<Record<string, unknown>>; structuredContent?: unknown };

  it('keeps a result within the limit as the server sent it', () => {
    const result = { content: [{ type: 'text', text: 'hello' }], structuredContent: { n: 1 } };
    expect(keptResult(result, 'mcp')).toEqual({ result });
  });

  it('cuts the text block that reaches the limit on a character boundary and counts the blocks after it', () => {
    const long = 'ab'.concat('€'.repeat(40_000), '"quoted"\n');
    const result = {
      content: [
        { type: 'text', text: 'first' },
        { type: 'text', text: long },
        { type: 'text', text: 'after' },
        { type: 'text', text: 'and after' },
      ],
    };
    const kept = keptResult(result, 'mcp');
    expect(kept.truncated).toBe(bytes(result));
    const shown = kept.result as Kept;
    expect(bytes(shown)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(bytes(shown)).toBeGreaterThan(MAX_TOOL_RESULT_BYTES - 512);
    expect(shown.content[0]).toEqual({ type: 'text', text: 'first' });
    const cut = shown.content[1]!.text as string;
    expect(long.startsWith(cut)).toBe(true);
    expect(cut.length).toBeGreaterThan(20_000);
    expect(cut).not.toContain('\uFFFD');
    expect(shown.content.slice(2)).toEqual([
      { type: 'text', text: '[2 more content blocks left out: the result was cut]' },
    ]);
    // The model gets the blocks as text, and the note of the length.
    const model = mcpResultContent(kept);
    expect(model[1]).toEqual({ type: 'text', text: cut });
    expect(model.at(-1)).toEqual({
      type: 'text',
      text: `[cut: the answer was ${bytes(result)} bytes; only its first ${MAX_TOOL_RESULT_BYTES} are kept]`,
    });
  });

  it('names an image that does not fit in a short text and keeps the blocks after it that do', () => {
    const image = { type: 'image', mimeType: 'image/png', data: 'A'.repeat(100_000) };
    const small = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' };
    const result = {
      content: [{ type: 'text', text: 'Here is the chart' }, image, small, { type: 'text', text: 'Done' }],
    };
    const kept = keptResult(result, 'mcp');
    const shown = kept.result as Kept;
    expect(bytes(shown)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(shown.content).toEqual([
      { type: 'text', text: 'Here is the chart' },
      { type: 'text', text: `[image image/png content of ${bytes(image)} bytes left out: the result was cut]` },
      small,
      { type: 'text', text: 'Done' },
    ]);
    expect(mcpResultContent(kept)[2]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
    });
  });

  it('keeps structuredContent beside the content when it fits, and says so when it does not', () => {
    const image = { type: 'image', mimeType: 'image/webp', data: 'A'.repeat(90_000) };
    const fits = keptResult(
      { content: [{ type: 'text', text: 'A chart' }, image], structuredContent: { n: 1 } },
      'mcp',
    );
    expect(fits.result).toEqual({
      content: [
        { type: 'text', text: 'A chart' },
        { type: 'text', text: `[image image/webp content of ${bytes(image)} bytes left out: the result was cut]` },
      ],
      structuredContent: { n: 1 },
    });
    const content = [{ type: 'text', text: 'x'.repeat(40_000) }];
    const cut = keptResult({ content, structuredContent: { rows: 'y'.repeat(30_000) } }, 'mcp').result as Kept;
    expect(bytes(cut)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(cut).not.toHaveProperty('structuredContent');
    expect(cut.content).toEqual([
      ...content,
      { type: 'text', text: '[structuredContent left out: the result was cut]' },
    ]);
  });

  it('turns a large structuredContent without content into its JSON text, cut', () => {
    const structuredContent = { rows: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `row ${i}` })) };
    const kept = keptResult({ content: [], structuredContent }, 'mcp');
    const shown = kept.result as Kept;
    expect(bytes(shown)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(shown.content).toHaveLength(1);
    expect(JSON.stringify(structuredContent).startsWith(shown.content[0]!.text as string)).toBe(true);
    expect(shown).not.toHaveProperty('structuredContent');
  });

  it('cuts an answer of an MCP site that is not a result as JSON text, like a site’s', () => {
    const answer = { notes: 'n'.repeat(70_000) };
    expect(keptResult(answer, 'mcp')).toEqual(keptResult(answer));
    expect(typeof keptResult(answer, 'mcp').result).toBe('string');
  });
});
