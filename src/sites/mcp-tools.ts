import { AppError, type FieldProblem } from '../common/app-error.js';
import type { Manifest, ManifestTool } from './manifest.js';
import type { McpAuthorization, McpToolAnnotations } from './mcp-state.js';
import type { SiteScope } from './scopes.js';

// An MCP server's tool list, held to the rules a manifest's tools keep, and the manifest-shaped
// snapshot every feature reads of a site.

export const MCP_MAX_TOOLS = 200;
export const MCP_MAX_SCHEMA_BYTES = 64 * 1024;
export const MCP_MAX_LIST_BYTES = 1024 * 1024;
const MAX_DESCRIPTION = 5000;
const MAX_TITLE = 200;
/** MCP's tool-name rule (2025-11-25): 1 to 128 of A-Z a-z 0-9 _ - . */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const ANNOTATION_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** What the server said of itself (initialize's serverInfo, or the discover result's). */
export interface McpServerInfo {
  name: string;
  title?: string;
  version: string;
  instructions?: string;
}

/** The scope a tool needs, from its annotations: read-only → read, destructive → delete, else write. */
export function scopeOfAnnotations(annotations: McpToolAnnotations | undefined): SiteScope {
  if (annotations?.readOnlyHint === true) {
    return 'read';
  }
  if (annotations?.destructiveHint === true) {
    return 'delete';
  }
  return 'write';
}

function annotationsOf(raw: unknown): McpToolAnnotations | undefined {
  if (typeof raw !== 'object' || raw === null) {
    return undefined;
  }
  const source = raw as Record<string, unknown>;
  const out: McpToolAnnotations = {};
  if (typeof source.title === 'string') {
    out.title = source.title.slice(0, MAX_TITLE);
  }
  for (const hint of ANNOTATION_HINTS) {
    if (typeof source[hint] === 'boolean') {
      out[hint] = source[hint];
    }
  }
  return out;
}

function checkTool(raw: unknown, index: number, names: Set<string>, problems: FieldProblem[]): ManifestTool | null {
  const field = `tools[${index}]`;
  if (typeof raw !== 'object' || raw === null) {
    problems.push({ field, message: 'is not an object' });
    return null;
  }
  const tool = raw as Record<string, unknown>;
  const before = problems.length;
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
    problems.push({ field: `${field}.name`, message: 'must be 1 to 128 letters, digits, _, - or .' });
  } else if (names.has(tool.name)) {
    problems.push({ field: `${field}.name`, message: `duplicates the tool name "${tool.name}"` });
  } else {
    names.add(tool.name);
  }
  if (tool.description !== undefined && typeof tool.description !== 'string') {
    problems.push({ field: `${field}.description`, message: 'must be a string' });
  } else if (typeof tool.description === 'string' && tool.description.length > MAX_DESCRIPTION) {
    problems.push({ field: `${field}.description`, message: `must be at most ${MAX_DESCRIPTION} characters` });
  }
  if (tool.title !== undefined && (typeof tool.title !== 'string' || tool.title.length > MAX_TITLE)) {
    problems.push({ field: `${field}.title`, message: `must be a string of at most ${MAX_TITLE} characters` });
  }
  const schema = tool.inputSchema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    problems.push({ field: `${field}.inputSchema`, message: 'must be a JSON Schema object' });
  } else if ((schema as Record<string, unknown>).type !== 'object') {
    problems.push({ field: `${field}.inputSchema.type`, message: 'must be "object" (an object schema)' });
  } else {
    const properties = (schema as Record<string, unknown>).properties;
    if (
      properties !== undefined &&
      (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    ) {
      problems.push({ field: `${field}.inputSchema.properties`, message: 'must be an object' });
    } else if (Buffer.byteLength(JSON.stringify(schema)) > MCP_MAX_SCHEMA_BYTES) {
      problems.push({ field: `${field}.inputSchema`, message: `must be at most ${MCP_MAX_SCHEMA_BYTES} bytes` });
    }
  }
  if (problems.length > before) {
    return null;
  }
  const annotations = annotationsOf(tool.annotations);
  const inputSchema = schema as Record<string, unknown>;
  const title = (tool.title as string | undefined) ?? annotations?.title;
  return {
    name: tool.name as string,
    ...(title !== undefined ? { title } : {}),
    description: (tool.description as string | undefined) ?? '',
    scope: scopeOfAnnotations(annotations),
    ...(annotations !== undefined ? { annotations } : {}),
    input_schema: {
      ...inputSchema,
      type: 'object',
      properties: (inputSchema.properties as ManifestTool['input_schema']['properties'] | undefined) ?? {},
    },
  };
}

/**
 * The server's `tools/list` (every page) as manifest tools; MANIFEST_INVALID with a `details` entry per
 * broken rule: at most 200 tools, unique names, an object schema as each input schema (at most 64 KiB),
 * the manifest's string limits, the whole list at most 1 MiB.
 */
export function mapMcpTools(tools: unknown[]): ManifestTool[] {
  const problems: FieldProblem[] = [];
  if (tools.length > MCP_MAX_TOOLS) {
    problems.push({
      field: 'tools',
      message: `must list at most ${MCP_MAX_TOOLS} tools (the server lists ${tools.length})`,
    });
  } else if (Buffer.byteLength(JSON.stringify(tools)) > MCP_MAX_LIST_BYTES) {
    problems.push({ field: 'tools', message: `must be at most ${MCP_MAX_LIST_BYTES} bytes as a whole` });
  }
  const names = new Set<string>();
  const mapped = problems.length > 0 ? [] : tools.map((tool, index) => checkTool(tool, index, names, problems));
  if (problems.length > 0) {
    throw new AppError(
      'MANIFEST_INVALID',
      "The MCP server's tool list breaks the rules for tools",
      problems.slice(0, 50),
    );
  }
  return mapped as ManifestTool[];
}

/**
 * The manifest-shaped snapshot of an MCP server (`sites.manifest`): the server's name and version, the
 * first line of its instructions as the description, the endpoint as `server.url`, `auth` as the 401
 * led (oauth2 with the discovered authorization server, else bearer), and its tools (none before a
 * credential works: the site is then `needs_connection`).
 */
export function mcpManifest(
  endpoint: string,
  server: McpServerInfo | null,
  tools: ManifestTool[],
  authorization: McpAuthorization | null,
): Manifest {
  const host = new URL(endpoint).host;
  const description = (server?.instructions ?? '').split('\n')[0]!.trim().slice(0, MAX_DESCRIPTION);
  const scopes =
    authorization?.scopesSupported ?? (authorization?.challengeScope ? authorization.challengeScope.split(' ') : []);
  return {
    name: (server?.title || server?.name || host).slice(0, 200),
    version: (server?.version || '0').slice(0, 64),
    description,
    server: { url: endpoint },
    auth:
      authorization === null
        ? { type: 'bearer' }
        : {
            type: 'oauth2',
            authorization_url: authorization.authorizationEndpoint,
            token_url: authorization.tokenEndpoint,
            scopes,
            issuer: authorization.issuer,
          },
    tools,
  };
}

/** `ready` once the server listed its tools, else `needs_connection` (agentsite sites are always ready). */
export function siteStatus(site: { protocol: string; manifest: Manifest }): 'ready' | 'needs_connection' {
  return site.protocol !== 'mcp' || site.manifest.tools.length > 0 ? 'ready' : 'needs_connection';
}
