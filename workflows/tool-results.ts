/**
 * What the model is told of a tool's answer (the tool_result block's content), for both kinds of
 * site: an agentsite site's JSON answer as JSON text; an MCP server's `{content, structuredContent?}`
 * as content blocks the model reads as such (text, and images of the types it takes), any other
 * content as a short description. Part of the contracts (run-turns.ts re-exports it); imported by
 * workflow code, so only deterministic imports here (no Buffer: sizes are counted without it).
 */

/** The image types the model takes in a tool result. */
export const MODEL_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

/** A block of a tool_result's content, as the model's API takes it. */
export type ToolResultContentBlock =
  { type: 'text'; text: string } | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } };

/** The limit a kept tool answer is cut to (bytes of its JSON text); MAX_TOOL_RESULT_BYTES re-exports it. */
export const TOOL_RESULT_LIMIT_BYTES = 64 * 1024;

/** The model's words for a cut answer: its length, and what was kept. */
export function cutNote(bytes: number): string {
  return `[cut: the answer was ${bytes} bytes; only its first ${TOOL_RESULT_LIMIT_BYTES} are kept]`;
}

/** What the model is told of an agentsite site's answer: its JSON, or the cut text with a note. */
export function toolResultContent(output: { result: unknown; truncated?: number }): string {
  if (output.truncated === undefined) {
    return JSON.stringify(output.result);
  }
  return `${String(output.result)}\n${cutNote(output.truncated)}`;
}

/** The tool_result content for a tool of either protocol (`mcp`: an MCP server's tool). */
export function modelContentOf(
  output: { result: unknown; truncated?: number },
  protocol: 'mcp' | undefined,
): string | ToolResultContentBlock[] {
  return protocol === 'mcp' ? mcpResultContent(output) : toolResultContent(output);
}

type Block = Record<string, unknown>;

function text(value: string): ToolResultContentBlock {
  return { type: 'text', text: value };
}

/** A base64 string's decoded length, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A short description of a content block the model cannot take as such. */
function describe(block: Block): string {
  const type = typeof block.type === 'string' ? block.type : 'unknown';
  const mime = str(block.mimeType);
  const data = typeof block.data === 'string' ? ` of ${base64Bytes(block.data)} bytes` : '';
  switch (type) {
    case 'image':
      return `[image${mime ? ` (${mime})` : ''}${data}: not shown, the model takes ${MODEL_IMAGE_TYPES.join(', ')} only]`;
    case 'audio':
      return `[audio${mime ? ` (${mime})` : ''}${data}: not passed on, the model cannot hear it]`;
    case 'resource_link': {
      const title = str(block.title) ?? str(block.name) ?? 'a resource';
      const about = str(block.description);
      return `[link to ${title}: ${String(block.uri)}${mime ? ` (${mime})` : ''}${about ? ` — ${about}` : ''}]`;
    }
    case 'resource': {
      const resource = (block.resource ?? {}) as Block;
      const kind = str(resource.mimeType);
      const blob = typeof resource.blob === 'string' ? ` of ${base64Bytes(resource.blob)} bytes` : '';
      return `[embedded resource ${String(resource.uri)}${kind ? ` (${kind})` : ''}${blob}: binary, not shown]`;
    }
    default:
      return `[${type} content: not shown]`;
  }
}

/** One MCP content block as the model gets it. */
function modelBlock(block: Block): ToolResultContentBlock | undefined {
  if (block.type === 'text' && typeof block.text === 'string') {
    // The model's API refuses an empty text block.
    return block.text === '' ? undefined : text(block.text);
  }
  if (
    block.type === 'image' &&
    typeof block.data === 'string' &&
    (MODEL_IMAGE_TYPES as readonly unknown[]).includes(block.mimeType)
  ) {
    return { type: 'image', source: { type: 'base64', media_type: block.mimeType as string, data: block.data } };
  }
  if (block.type === 'resource') {
    // An embedded text resource is text the server chose to send: the model reads it, named.
    const resource = (block.resource ?? {}) as Block;
    if (typeof resource.text === 'string') {
      const kind = str(resource.mimeType);
      return text(`[resource ${String(resource.uri)}${kind ? ` (${kind})` : ''}]\n${resource.text}`);
    }
  }
  return text(describe(block));
}

/**
 * What the model is told of an MCP tool's result: each content block as such (text; images of the
 * types it takes), others as a short text; `structuredContent` as JSON text when there is no content
 * (a server that sends both puts the same data in a text block, as MCP asks); a cut result ends with
 * the note of its length. A result that is not `{content: [...]}` (a cut before this existed) is text.
 */
export function mcpResultContent(output: { result: unknown; truncated?: number }): ToolResultContentBlock[] {
  const result = output.result as { content?: unknown; structuredContent?: unknown } | null;
  const blocks: ToolResultContentBlock[] = [];
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) {
    blocks.push(text(typeof output.result === 'string' ? output.result : (JSON.stringify(output.result) ?? 'null')));
  } else {
    for (const block of result.content as unknown[]) {
      const mapped = block !== null && typeof block === 'object' ? modelBlock(block as Block) : undefined;
      if (mapped !== undefined) {
        blocks.push(mapped);
      }
    }
    if (result.content.length === 0 && result.structuredContent !== undefined) {
      blocks.push(text(JSON.stringify(result.structuredContent)));
    }
  }
  if (output.truncated !== undefined) {
    blocks.push(text(cutNote(output.truncated)));
  }
  // The model's API wants some content in a tool result.
  return blocks.length > 0 ? blocks : [text('(the tool returned no content)')];
}
