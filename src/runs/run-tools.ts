import { type CallToolOutput, MAX_TOOL_RESULT_BYTES, type RunTool } from '../../workflows/contracts.js';
import type { SiteEntity } from '../vault/site.entity.js';

const MAX_TOOL_NAME = 64;

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
 * (a numeric suffix separates sites of the same name), within the model's name limit.
 */
export function buildRunTools(sites: SiteEntity[], chosen?: (site: SiteEntity, tool: string) => boolean): RunTool[] {
  const used = new Set<string>();
  const tools: RunTool[] = [];
  for (const site of sites) {
    const prefix = slug(site.manifest.name);
    for (const tool of site.manifest.tools) {
      if (chosen !== undefined && !chosen(site, tool.name)) {
        continue;
      }
      const base = `${prefix}__${tool.name}`.slice(0, MAX_TOOL_NAME);
      let name = base;
      for (let n = 2; used.has(name); n += 1) {
        const suffix = `_${n}`;
        name = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
      }
      used.add(name);
      tools.push({
        name,
        description: `${tool.description} (site: ${site.manifest.name})`,
        input_schema: {
          type: 'object',
          properties: tool.input_schema.properties,
          required: tool.input_schema.required ?? [],
        },
        siteId: site.id,
        siteName: site.manifest.name,
        tool: tool.name,
      });
    }
  }
  return tools;
}

/**
 * What a run keeps of a tool's answer: the answer itself, or, when its JSON is longer than
 * MAX_TOOL_RESULT_BYTES, the first MAX_TOOL_RESULT_BYTES of that text (never a character cut in two)
 * and the answer's length. The result travels through Temporal with the run's later turns.
 */
export function keptResult(result: unknown): Pick<CallToolOutput, 'result' | 'truncated'> {
  const json = Buffer.from(JSON.stringify(result) ?? 'null', 'utf8');
  if (json.length <= MAX_TOOL_RESULT_BYTES) {
    return { result };
  }
  let end = MAX_TOOL_RESULT_BYTES;
  // Back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (json[end]! & 0xc0) === 0x80) {
    end -= 1;
  }
  return { result: json.subarray(0, end).toString('utf8'), truncated: json.length };
}
