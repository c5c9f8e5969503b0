/**
 * An MCP tool's result as the service passes it on (`{content, structuredContent?}`, and `isError`
 * when a server's refusal is shown as a result), read defensively: a server may send anything.
 */

export type Block =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string }
  | { type: 'resource'; uri: string; mimeType?: string; text?: string; blob?: string }
  | { type: 'other'; value: unknown };

export interface McpResult {
  blocks: Block[];
  structured: unknown;
  isError: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Base64 as MCP sends it (standard alphabet, padding): anything else is not put in a data URL. */
export function isBase64(value: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(value.replace(/\s+/g, ''));
}

/** Images a browser shows from a data URL without running anything (an SVG in <img> runs no script either). */
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml)$/;
const AUDIO_TYPES = /^audio\/[a-z0-9.+-]+$/;

/** A data URL of base64 content of a given media type; undefined when either looks wrong. */
export function dataUrl(data: string, mimeType: string, kind: 'image' | 'audio'): string | undefined {
  const type = mimeType.toLowerCase().split(';')[0]!.trim();
  const allowed = kind === 'image' ? IMAGE_TYPES : AUDIO_TYPES;
  if (!allowed.test(type) || !isBase64(data)) {
    return undefined;
  }
  return `data:${type};base64,${data.replace(/\s+/g, '')}`;
}

/** Only web links are links: a resource link to file:, javascript: or a custom scheme is shown as text. */
export function webLink(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function blockOf(raw: unknown): Block {
  if (!isObject(raw)) {
    return { type: 'other', value: raw };
  }
  const type = raw.type;
  if (type === 'text' && str(raw.text) !== undefined) {
    return { type, text: raw.text as string };
  }
  if ((type === 'image' || type === 'audio') && str(raw.data) !== undefined && str(raw.mimeType) !== undefined) {
    return { type, data: raw.data as string, mimeType: raw.mimeType as string };
  }
  if (type === 'resource_link' && str(raw.uri) !== undefined) {
    return {
      type,
      uri: raw.uri as string,
      name: str(raw.name) ?? (raw.uri as string),
      title: str(raw.title),
      description: str(raw.description),
      mimeType: str(raw.mimeType),
    };
  }
  if (type === 'resource' && isObject(raw.resource) && str(raw.resource.uri) !== undefined) {
    const r = raw.resource;
    return { type, uri: r.uri as string, mimeType: str(r.mimeType), text: str(r.text), blob: str(r.blob) };
  }
  return { type: 'other', value: raw };
}

/** The result as content blocks, or undefined when it is not an MCP result (an agentsite site's JSON). */
export function mcpResultOf(result: unknown): McpResult | undefined {
  // Every block of MCP content names its type: a site's own JSON with a `content` list of other things stays JSON.
  if (
    !isObject(result) ||
    !Array.isArray(result.content) ||
    !result.content.every((block) => isObject(block) && typeof block.type === 'string')
  ) {
    return undefined;
  }
  return {
    blocks: result.content.map(blockOf),
    structured: result.structuredContent,
    isError: result.isError === true,
  };
}

/** A file name for a resource's download: the last part of its URI's path, else "resource". */
export function fileNameOf(uri: string): string {
  const last = uri.split(/[?#]/)[0]!.split('/').filter(Boolean).pop();
  return last === undefined || last.includes(':') ? 'resource' : decodeURIComponent(last).replace(/[\\/]/g, '_');
}
