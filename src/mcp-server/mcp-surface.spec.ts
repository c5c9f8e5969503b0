import { describe, expect, it } from '@jest/globals';
import type { ApprovalsService } from '../approvals/approvals.service.js';
import type { ToolCaller } from '../tools/tool-caller.js';
import type { SiteEntity } from '../vault/site.entity.js';
import type { VaultService } from '../vault/vault.service.js';
import type { Scope } from '../workspaces/scope.js';
import type { AgentTool, McpAgentTools } from './mcp-agent-tools.js';
import { McpApprovals, type McpDecision } from './mcp-approvals.js';
import { McpSiteTools, type McpCallResult } from './mcp-site-tools.js';
import { McpSurface } from './mcp-surface.js';

const scope = { user: { id: 'u1' }, workspace: null } as unknown as Scope;

function site(id: string, name: string, tools: string[]): SiteEntity {
  return {
    id,
    protocol: 'agentsite',
    manifest: {
      name,
      tools: tools.map((tool) => ({
        name: tool,
        description: `${tool} of ${name}`,
        scope: 'read',
        input_schema: { type: 'object', properties: {} },
      })),
    },
  } as unknown as SiteEntity;
}

/** A surface over fake sites and agents that records what each tools/call read. */
function world(sites: SiteEntity[], agentNames: string[]) {
  const reads = { agentLists: 0, siteLists: 0, started: [] as string[], decided: [] as McpDecision[] };
  const vault = {
    sitesOf: async () => {
      reads.siteLists += 1;
      return sites;
    },
    findForCall: async (_scope: Scope, siteId: string) => ({
      site: sites.find((s) => s.id === siteId)!,
      credential: null,
    }),
  } as unknown as VaultService;
  const caller = {
    call: async ({ site: called, tool }: { site: SiteEntity; tool: string }) => ({
      result: { site: called.id, tool },
    }),
  } as unknown as ToolCaller;
  const agents = {
    list: async (): Promise<AgentTool[]> => {
      reads.agentLists += 1;
      return agentNames.map((name, i) => ({
        agentId: `a${i}`,
        webhook: false,
        listed: { name, inputSchema: { type: 'object' } },
      }));
    },
    start: async (_scope: Scope, tool: AgentTool) => {
      reads.started.push(tool.agentId);
      return { id: 'r1', status: 'queued' };
    },
    wait: async () => ({ id: 'r1', status: 'completed', timeline: [{ type: 'completed', output: 'done' }] }),
  } as unknown as McpAgentTools;
  const approvals = new McpApprovals({
    decide: async (_scope: Scope, runId: string, approvalId: string, body: object) => {
      reads.decided.push({ runId, approvalId, ...body } as McpDecision);
      return { id: runId, status: 'active', awaiting: null };
    },
  } as unknown as ApprovalsService);
  const surface = new McpSurface(new McpSiteTools(vault, caller), agents, approvals);
  const call = (name: string, args: object = {}): Promise<McpCallResult> =>
    (
      surface as unknown as {
        call: (s: Scope, n: string, a: object, how: object) => Promise<McpCallResult>;
      }
    ).call(scope, name, args, { signal: new AbortController().signal, onProgress: undefined, task: false });
  return { reads, call };
}

describe('McpSurface: resolving a tools/call name', () => {
  it('resolves a site tool from the sites alone (no agent listing), same-named sites by their _2 suffix', async () => {
    const { reads, call } = world(
      [site('s1', 'Notes', ['search']), site('s2', 'notes', ['search']), site('s3', 'Agent', ['x'])],
      ['agent__x'],
    );
    await expect(call('notes__search_2')).resolves.toMatchObject({ structuredContent: { site: 's2', tool: 'search' } });
    await expect(call('notes__search')).resolves.toMatchObject({ structuredContent: { site: 's1', tool: 'search' } });
    expect(reads).toMatchObject({ agentLists: 0, siteLists: 2 });
    await expect(call('notes__nothing')).rejects.toMatchObject({ data: { code: 'NOT_FOUND', statusCode: 404 } });
  });

  it('keeps the reserved names: an agent wins its name, the site tool it renamed answers as <name>_2', async () => {
    const { reads, call } = world([site('s3', 'Agent', ['x'])], ['agent__x']);
    await expect(call('agent__x')).resolves.toMatchObject({ structuredContent: { runId: 'r1', output: 'done' } });
    expect(reads.started).toEqual(['a0']);
    // The site's own name is agent__x: listed (and called) as agent__x_2, found through the full listing.
    await expect(call('agent__x_2')).resolves.toMatchObject({ structuredContent: { site: 's3', tool: 'x' } });
    expect(reads.started).toEqual(['a0']);
    // Without an agent of that name the site tool keeps its own name.
    const alone = world([site('s3', 'Agent', ['x'])], []);
    await expect(alone.call('agent__x')).resolves.toMatchObject({ structuredContent: { site: 's3', tool: 'x' } });
    expect(alone.reads.started).toEqual([]);
  });

  it('routes decide_approval to the approvals’ decision; a site tool’s name is left alone', async () => {
    const { reads, call } = world([site('s4', 'Decide', ['approval'])], []);
    await expect(call('decide_approval', { runId: 'r1', approvalId: 'ap1', decision: 'deny' })).resolves.toMatchObject({
      structuredContent: { id: 'r1', awaiting: null },
    });
    expect(reads.decided).toEqual([{ runId: 'r1', approvalId: 'ap1', decision: 'deny' }]);
    await expect(call('decide_approval', { runId: 'r1' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(reads.decided).toHaveLength(1);
    await expect(call('decide__approval')).resolves.toMatchObject({
      structuredContent: { site: 's4', tool: 'approval' },
    });
  });
});
