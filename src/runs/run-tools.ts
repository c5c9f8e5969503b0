import { type CallToolOutput, MAX_TOOL_RESULT_BYTES, type RunTool } from '../../workflows/contracts.js';
import type { ManifestTool } from '../sites/manifest.js';
import type { SiteProtocol } from '../sites/mcp-state.js';
import { scopeOfAnnotations } from '../sites/mcp-tools.js';
import { deriveScope, type SiteScope } from '../sites/scopes.js';
import type { SiteEntity } from '../vault/site.entity.js';

const MAX_TOOL_NAME = 64;

/** What the model's tool names may hold (^[a-zA-Z0-9_-]{1,64}$): anything else becomes `_`. */
function fitName(value: string): string {
  return value.replace(/[^a-zA-Z0-9_-]/g, '_');
}

type Schema = Record<string, unknown>;

function schemasIn(value: unknown): Schema[] {
  return Array.isArray(value) ? value.filter((v): v is Schema => v !== null && typeof v === 'object') : [];
}

/**
 * An MCP tool's JSON Schema as the model takes it: whole, but for what the model's API refuses, which
 * would fail every request the tool is offered in. `$schema` is left out: the API reads every schema as
 * JSON Schema 2020-12 and refuses one declaring another dialect (servers on older SDKs declare
 * draft-07). `oneOf`/`anyOf`/`allOf` at the top level are refused too: the model is shown their
 * branches' properties (and allOf's required) instead, and the call is still checked against the
 * whole schema (ToolCaller), so a wrong input comes back to the model as the server's rules.
 */
function modelSchema(schema: ManifestTool['input_schema']): Schema {
  const { $schema: _dialect, oneOf, anyOf, allOf, ...rest } = schema;
  const branches = [...schemasIn(oneOf), ...schemasIn(anyOf), ...schemasIn(allOf)];
  if (branches.length === 0) {
    return rest;
  }
  const properties: Schema = { ...rest.properties };
  for (const branch of branches) {
    for (const [name, property] of Object.entries((branch.properties ?? {}) as Schema)) {
      properties[name] ??= property;
    }
  }
  const required = new Set(rest.required ?? []);
  for (const branch of schemasIn(allOf)) {
    for (const name of Array.isArray(branch.required) ? branch.required : []) {
      required.add(String(name));
    }
  }
  return { ...rest, properties, ...(required.size > 0 ? { required: [...required] } : {}) };
}

/** An MCP tool's description for the model: its title (when it says more than the name) and description. */
function describedTool(tool: ManifestTool): string {
  const title = tool.title !== undefined && tool.title !== tool.name ? tool.title : '';
  return [title, tool.description].filter((part) => part !== '').join(': ');
}

function slug(value: string): string {
  return (
    value
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 24) || 'site'
  );
}

/**
 * The tools of an agent's sites as the model sees them: `<site>__<tool>`, unique across sites
 * (a numeric suffix separates sites of the same name), within the model's name pattern: an MCP
 * tool's name may hold `.` or `/` or run to 128 characters, which are mapped (`_`, cut, a suffix when
 * two names meet); `tool` keeps the site's own name, which the call goes out with. An MCP tool gives
 * the model its whole JSON Schema and its title; an agentsite tool, its properties and required.
 */
export function buildRunTools(
  sites: readonly SiteEntity[],
  chosen?: (site: SiteEntity, tool: string) => boolean,
): RunTool[] {
  const used = new Set<string>();
  const tools: RunTool[] = [];
  for (const site of sites) {
    const prefix = slug(site.manifest.name);
    for (const tool of site.manifest.tools) {
      if (chosen !== undefined && !chosen(site, tool.name)) {
        continue;
      }
      const base = fitName(`${prefix}__${tool.name}`).slice(0, MAX_TOOL_NAME);
      let name = base;
      for (let n = 2; used.has(name); n += 1) {
        const suffix = `_${n}`;
        name = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
      }
      used.add(name);
      const mcp = site.protocol === 'mcp';
      tools.push({
        name,
        description: mcp
          ? [describedTool(tool), `(site: ${site.manifest.name})`].filter((part) => part !== '').join(' ')
          : `${tool.description} (site: ${site.manifest.name})`,
        input_schema: mcp
          ? modelSchema(tool.input_schema)
          : {
              type: 'object',
              properties: tool.input_schema.properties,
              required: tool.input_schema.required ?? [],
            },
        siteId: site.id,
        siteName: site.manifest.name,
        tool: tool.name,
        ...(mcp ? { protocol: 'mcp' as const } : {}),
        scope: scopeOfTool(tool, mcp),
      });
    }
  }
  return tools;
}

/**
 * The scope a call of the tool needs (an approval policy waits for the scopes it lists): the manifest's
 * scope, else guessed from the name (deriveScope); an MCP tool's is derived from its annotations when
 * its snapshot was taken (mcp-tools.ts), and from them here for a snapshot that lacks it.
 */
function scopeOfTool(tool: ManifestTool, mcp: boolean): SiteScope {
  return mcp && tool.scope === undefined ? scopeOfAnnotations(tool.annotations) : deriveScope(tool);
}

/**
 * What a run (and a chat turn, for the model) keeps of a tool's answer: the answer itself, or, when
 * its JSON is longer than MAX_TOOL_RESULT_BYTES, a cut that fits with the answer's length in
 * `truncated`. An agentsite site's answer is cut as text (keptJsonText); an MCP tool's result stays a
 * result (keptMcpResult), so the model still gets its text and images. The result travels through
 * Temporal with the run's later turns.
 */
export function keptResult(result: unknown, protocol?: SiteProtocol): Pick<CallToolOutput, 'result' | 'truncated'> {
  const bytes = jsonBytes(result);
  if (bytes <= MAX_TOOL_RESULT_BYTES) {
    return { result };
  }
  return protocol === 'mcp' && isMcpResult(result) ? keptMcpResult(result, bytes) : keptJsonText(result);
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

/** The first MAX_TOOL_RESULT_BYTES of the answer's JSON text (never a character cut in two). */
function keptJsonText(result: unknown): Pick<CallToolOutput, 'result' | 'truncated'> {
  const json = Buffer.from(JSON.stringify(result) ?? 'null', 'utf8');
  return { result: prefixOf(json, MAX_TOOL_RESULT_BYTES), truncated: json.length };
}

/** The longest prefix of `bytes` within `max` bytes that ends on a character boundary, as text. */
function prefixOf(bytes: Buffer, max: number): string {
  let end = Math.min(max, bytes.length);
  // Back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) {
    end -= 1;
  }
  return bytes.subarray(0, end).toString('utf8');
}

type McpResult = { content: Array<Record<string, unknown>>; structuredContent?: unknown };

function isMcpResult(result: unknown): result is McpResult {
  return result !== null && typeof result === 'object' && Array.isArray((result as McpResult).content);
}

/** Room kept for the last block, the note of what was left out. */
const NOTE_ROOM = 256;
/** A text cut shorter than this is not worth a block. */
const MIN_TEXT_CUT = 64;
const TEXT_SHELL = jsonBytes({ type: 'text', text: '' }) - 2;

/** The longest prefix of `text` whose JSON string (quotes and escapes included) is within `max` bytes. */
function textWithin(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  let end = Math.min(bytes.length, max);
  for (;;) {
    const cut = prefixOf(bytes, end);
    const over = jsonBytes(cut) - max;
    if (over <= 0) {
      return cut;
    }
    end = Math.max(0, Math.min(end, Buffer.byteLength(cut)) - over);
  }
}

/** What a block left out was, in a few words (its type, media type and size). */
function leftOut(block: Record<string, unknown>): string {
  const mime = typeof block.mimeType === 'string' ? ` ${block.mimeType}` : '';
  return `[${String(block.type)}${mime} content of ${jsonBytes(block)} bytes left out: the result was cut]`;
}

/**
 * An MCP result cut to MAX_TOOL_RESULT_BYTES of JSON and still a result: its content blocks in order
 * while they fit, the text block that reaches the limit cut on a character boundary, a block of
 * another type that does not fit named in a short text instead, and a last text saying how many blocks
 * were left out. structuredContent is kept when it fits after the content; with no content, it becomes
 * a text block of its JSON (cut like any text), as the model would have been shown it.
 */
function keptMcpResult(result: McpResult, bytes: number): Pick<CallToolOutput, 'result' | 'truncated'> {
  const blocks =
    result.content.length === 0 && result.structuredContent !== undefined
      ? [{ type: 'text', text: JSON.stringify(result.structuredContent) }]
      : result.content;
  const content: Array<Record<string, unknown>> = [];
  const budget = MAX_TOOL_RESULT_BYTES - NOTE_ROOM;
  let used = jsonBytes({ content: [] });
  let left = 0;
  for (const block of blocks) {
    const size = jsonBytes(block) + 1;
    if (left === 0 && used + size <= budget) {
      content.push(block);
      used += size;
      continue;
    }
    const room = budget - used - 1 - TEXT_SHELL;
    if (left === 0 && block.type === 'text' && typeof block.text === 'string' && room >= MIN_TEXT_CUT) {
      const cut = { type: 'text', text: textWithin(block.text, room) };
      content.push(cut);
      used += jsonBytes(cut) + 1;
      continue;
    }
    const named = { type: 'text', text: leftOut(block) };
    if (left === 0 && used + jsonBytes(named) + 1 <= budget) {
      content.push(named);
      used += jsonBytes(named) + 1;
      continue;
    }
    left += 1;
  }
  const kept: McpResult = { content };
  const structured = blocks === result.content ? result.structuredContent : undefined;
  if (structured !== undefined && left === 0 && used + jsonBytes(structured) + 22 <= budget) {
    kept.structuredContent = structured;
  } else if (structured !== undefined) {
    content.push({ type: 'text', text: '[structuredContent left out: the result was cut]' });
  }
  if (left > 0) {
    content.push({
      type: 'text',
      text: `[${left} more content block${left === 1 ? '' : 's'} left out: the result was cut]`,
    });
  }
  return { result: kept, truncated: bytes };
}
