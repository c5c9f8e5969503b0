import { Injectable } from '@nestjs/common';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { AppError } from '../common/app-error.js';
import { buildRunTools } from '../runs/run-tools.js';
import type { RunTool } from '../../workflows/contracts.js';
import type { ManifestTool } from '../sites/manifest.js';
import { deriveScope, type SiteScope } from '../sites/scopes.js';
import { ToolCaller } from '../tools/tool-caller.js';
import { VaultService } from '../vault/vault.service.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { requireRole, type Scope } from '../workspaces/scope.js';
import { isSiteFailure } from './mcp-errors.js';

/** A tool as /mcp lists it (MCP's Tool, the fields the endpoint fills). */
export interface McpListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [keyword: string]: unknown };
  outputSchema?: { type: 'object'; [keyword: string]: unknown };
  annotations?: Record<string, unknown>;
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' };
}

/** A tools/call result (MCP's CallToolResult). */
export interface McpCallResult {
  [key: string]: unknown;
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

interface SiteTool {
  listed: McpListedTool;
  siteId: string;
  tool: string;
  scope: SiteScope;
}

/** A vault's run tools, by name, and its sites by id. */
interface VaultTools {
  tools: RunTool[];
  byName: Map<string, RunTool>;
  sites: Map<string, SiteEntity>;
}

/** Progress of a call, for the request's progress notifications. */
export type ProgressSink = (progress: { progress: number; total?: number; message?: string }) => void;

/** What an agentsite tool's scope says to an MCP client. */
function annotationsOf(site: SiteEntity, tool: ManifestTool, scope: SiteScope): Record<string, unknown> {
  if (site.protocol === 'mcp') {
    // The server's own annotations, as it sent them.
    return { ...tool.annotations };
  }
  return {
    readOnlyHint: scope === 'read',
    destructiveHint: scope === 'delete' || scope === 'admin',
    openWorldHint: true,
  };
}

/**
 * The tools of every site of the scope's vault, as `<site>__<tool>` (the names runs give the model,
 * src/runs/run-tools.ts: valid MCP tool names, unique across sites, stable while the vault keeps its
 * sites), and their calls through the one ToolCaller, as the REST direct call makes them.
 */
@Injectable()
export class McpSiteTools {
  /** Keyed by the vault's list itself: a list the vault no longer keeps takes its tools with it. */
  private readonly built = new WeakMap<readonly SiteEntity[], VaultTools>();

  constructor(
    private readonly vault: VaultService,
    private readonly caller: ToolCaller,
  ) {}

  /** The scope's site tools; `reserved` names (the agents' and get_run) are never given to a site tool. */
  async list(scope: Scope, reserved: ReadonlySet<string>): Promise<SiteTool[]> {
    const vault = this.toolsOf(await this.vault.sitesOf(scope));
    return vault.tools.map((runTool) => {
      let name = runTool.name;
      for (let n = 2; reserved.has(name); n += 1) {
        name = `${runTool.name.slice(0, 60)}_${n}`;
      }
      return siteTool(vault.sites.get(runTool.siteId)!, runTool, name);
    });
  }

  /**
   * The site tool `list(scope, new Set())` names `name`, without building the others: what a
   * tools/call resolves when no reserved name can have renamed the tool it asks for.
   */
  async named(scope: Scope, name: string): Promise<SiteTool | undefined> {
    const vault = this.toolsOf(await this.vault.sitesOf(scope));
    const runTool = vault.byName.get(name);
    return runTool === undefined ? undefined : siteTool(vault.sites.get(runTool.siteId)!, runTool, name);
  }

  /**
   * The run tools of a vault's site list, built once per list: the vault caches a list until one of its
   * sites changes (VaultRepository.firstSites), so the calls in between name their tools from here.
   */
  private toolsOf(sites: readonly SiteEntity[]): VaultTools {
    let vault = this.built.get(sites);
    if (vault === undefined) {
      const tools = buildRunTools(sites);
      vault = {
        tools,
        // The first of a name, as list() would give it (buildRunTools makes names unique).
        byName: new Map(tools.map((tool) => [tool.name, tool])),
        sites: new Map(sites.map((site) => [site.id, site])),
      };
      this.built.set(sites, vault);
    }
    return vault;
  }

  /**
   * Calls the tool: a viewer of the workspace may call read tools only (PERMISSION_DENIED otherwise);
   * the site's failures come back as `isError` results, the service's refusals as errors (thrown).
   */
  async call(scope: Scope, tool: SiteTool, args: unknown, onProgress?: ProgressSink): Promise<McpCallResult> {
    if (tool.scope !== 'read') {
      requireRole(scope, 'member', `Calling a ${tool.scope} tool`);
    }
    const { site, credential } = await this.vault.findForCall(scope, tool.siteId);
    try {
      const { result } = await this.caller.call({
        site,
        credential,
        tool: tool.tool,
        input: args ?? {},
        ...(onProgress !== undefined ? { onProgress } : {}),
      });
      return site.protocol === 'mcp' ? (result as McpCallResult) : jsonResult(result);
    } catch (err) {
      if (isSiteFailure(err)) {
        return { isError: true, content: [{ type: 'text', text: err.message }] };
      }
      if (err instanceof AppError && err.code === 'NOT_FOUND') {
        // The site no longer has the tool (its manifest changed since the list).
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message, {
          code: err.code,
          statusCode: err.statusCode,
        });
      }
      throw err;
    }
  }
}

/** A run tool of the site as /mcp lists it, under `name`. */
function siteTool(site: SiteEntity, runTool: RunTool, name: string): SiteTool {
  const tool = site.manifest.tools.find((t) => t.name === runTool.tool)!;
  const scopeNeeded = deriveScope(tool);
  const mcp = site.protocol === 'mcp';
  const { $schema: _dialect, ...wholeSchema } = tool.input_schema;
  return {
    siteId: site.id,
    tool: tool.name,
    scope: scopeNeeded,
    listed: {
      name,
      title: `${tool.title ?? tool.annotations?.title ?? tool.name} (${site.manifest.name})`,
      description: runTool.description,
      inputSchema: { ...(mcp ? wholeSchema : runTool.input_schema), type: 'object' },
      annotations: annotationsOf(site, tool, scopeNeeded),
    },
  };
}

/** An agentsite site's JSON answer: as text for any client, and as structuredContent when it is an object. */
export function jsonResult(result: unknown): McpCallResult {
  const structured =
    result !== null && typeof result === 'object' && !Array.isArray(result)
      ? { structuredContent: result as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text: JSON.stringify(result) }], ...structured };
}
