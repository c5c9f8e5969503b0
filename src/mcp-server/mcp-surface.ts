import { Injectable } from '@nestjs/common';
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { AppError } from '../common/app-error.js';
import { readPackageVersion } from '../common/version.js';
import type { Scope } from '../workspaces/scope.js';
import { AGENT_PREFIX, GET_RUN_TOOL, McpAgentTools, runResult } from './mcp-agent-tools.js';
import { DECIDE_APPROVAL, DECIDE_APPROVAL_TOOL, McpApprovals } from './mcp-approvals.js';
import type { McpPrincipal } from './mcp-bearer.js';
import { answering } from './mcp-errors.js';
import { createdTask, registerTaskHandlers, TASKS_CAPABILITY } from './mcp-tasks.js';
import { McpSiteTools, type McpCallResult, type McpListedTool, type ProgressSink } from './mcp-site-tools.js';

/** How long MCP clients may keep a list (2026-07-28 cache hints): the vault and agents change rarely. */
const LIST_TTL_MS = 60_000;

/** The run resource: a run with its timeline, as GET /api/runs/:id answers it. */
export const RUN_URI_TEMPLATE = 'agentsite://runs/{id}';
const RUN_URI = /^agentsite:\/\/runs\/([^/?#]+)$/;

type Notify = (notification: { method: string; params?: Record<string, unknown> }) => Promise<void>;

/** notifications/progress for the request's progressToken, when it sent one. */
export function progressSink(meta: Record<string, unknown> | undefined, notify: Notify): ProgressSink | undefined {
  const token = meta?.progressToken;
  if (typeof token !== 'string' && typeof token !== 'number') {
    return undefined;
  }
  return (progress) => {
    notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } }).catch(() => undefined);
  };
}

const GET_RUN: McpListedTool = {
  name: GET_RUN_TOOL,
  title: 'Read an agent run',
  description: 'A run of one of your agents, with its timeline, by the id an agent tool answered.',
  inputSchema: {
    type: 'object',
    properties: { runId: { type: 'string', description: 'The run id' } },
    required: ['runId'],
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

function runJson(run: unknown): McpCallResult {
  return { content: [{ type: 'text', text: JSON.stringify(run) }], structuredContent: run as Record<string, unknown> };
}

/**
 * What /mcp exposes to one caller: built for each request from the caller's scope (the SDK's factory),
 * so nothing outlives the request. Tools: the agents (`agent__<name>`), get_run and the vault's site
 * tools (`<site>__<tool>`); resources: the runs (`agentsite://runs/{id}`).
 */
@Injectable()
export class McpSurface {
  private readonly version = readPackageVersion();

  constructor(
    private readonly sites: McpSiteTools,
    private readonly agents: McpAgentTools,
    private readonly approvals: McpApprovals,
  ) {}

  server(principal: McpPrincipal, era: 'legacy' | 'modern'): Server {
    const { scope } = principal;
    // Task-augmented calls are 2025-11-25 vocabulary: the 2026-07-28 revision removed them from the core.
    const tasks = era === 'legacy';
    const server = new Server(
      { name: 'agentsite', title: 'agentsite', version: this.version },
      {
        capabilities: {
          tools: { listChanged: false },
          resources: { listChanged: false, subscribe: false },
          ...(tasks ? { tasks: TASKS_CAPABILITY } : {}),
        },
        instructions:
          'The tools of the sites in your agentsite vault (<site>__<tool>), your agents (agent__<name>: ' +
          'a call runs the agent), get_run, and decide_approval (a run that waits for your approval before ' +
          'a tool call goes on once you approve or deny it); runs are resources too (agentsite://runs/{id}).',
        cacheHints: {
          'tools/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
          'resources/list': { ttlMs: 0, cacheScope: 'private' },
          'resources/templates/list': { ttlMs: 24 * 3600_000, cacheScope: 'public' },
          'resources/read': { ttlMs: 0, cacheScope: 'private' },
        },
      },
    );
    server.setRequestHandler('tools/list', () =>
      answering(async () => ({ tools: (await this.tools(scope, tasks)).listed })),
    );
    server.setRequestHandler('tools/call', (request, ctx) =>
      answering(async () => {
        const { name } = request.params;
        const args = (request.params.arguments ?? {}) as Record<string, unknown>;
        const onProgress = progressSink(request.params._meta as Record<string, unknown> | undefined, (n) =>
          ctx.mcpReq.notify(n as never),
        );
        const task = tasks && request.params.task !== undefined;
        return (await this.call(scope, name, args, { signal: ctx.mcpReq.signal, onProgress, task })) as never;
      }),
    );
    server.setRequestHandler('resources/list', () => answering(async () => ({ resources: [] })));
    server.setRequestHandler('resources/templates/list', () =>
      answering(async () => ({
        resourceTemplates: [
          {
            uriTemplate: RUN_URI_TEMPLATE,
            name: 'run',
            title: 'An agent run',
            description: 'A run of one of your agents with its timeline (JSON, as GET /api/runs/{id})',
            mimeType: 'application/json',
          },
        ],
      })),
    );
    server.setRequestHandler('resources/read', (request) =>
      answering(async () => {
        const { uri } = request.params;
        const id = RUN_URI.exec(uri)?.[1];
        if (id === undefined) {
          throw new AppError('NOT_FOUND', `No resource at ${uri}`);
        }
        const run = await this.agents.describe(scope, decodeURIComponent(id));
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(run) }] };
      }),
    );
    if (tasks) {
      registerTaskHandlers(server, scope, this.agents);
    }
    return server;
  }

  /** The caller's tools: agents and get_run first (their names are reserved), then the site tools. */
  private async tools(scope: Scope, tasks = false) {
    const agents = (await this.agents.list(scope)).map((a) =>
      tasks ? { ...a, listed: { ...a.listed, execution: { taskSupport: 'optional' as const } } } : a,
    );
    const reserved = new Set([GET_RUN_TOOL, DECIDE_APPROVAL_TOOL, ...agents.map((a) => a.listed.name)]);
    const sites = await this.sites.list(scope, reserved);
    return {
      agents,
      sites,
      listed: [...agents.map((a) => a.listed), GET_RUN, DECIDE_APPROVAL, ...sites.map((s) => s.listed)],
    };
  }

  private async call(
    scope: Scope,
    name: string,
    args: Record<string, unknown>,
    how: { signal: AbortSignal; onProgress: ProgressSink | undefined; task: boolean },
  ): Promise<McpCallResult> {
    const { signal, onProgress } = how;
    if (name === GET_RUN_TOOL) {
      if (typeof args.runId !== 'string') {
        throw AppError.validation([{ field: 'runId', message: 'must be a string' }]);
      }
      return runJson(await this.agents.describe(scope, args.runId));
    }
    if (name === DECIDE_APPROVAL_TOOL) {
      // The REST route's decision (member and up, the run in the caller's scope), answered as get_run answers.
      return runJson(await this.approvals.decide(scope, args));
    }
    const agentNamed = name.startsWith(AGENT_PREFIX);
    if (agentNamed) {
      const agent = (await this.agents.list(scope)).find((a) => a.listed.name === name);
      if (agent !== undefined) {
        const started = await this.agents.start(scope, agent, args);
        if (how.task) {
          // The client polls tasks/get and reads tasks/result: the task is the run.
          return createdTask(started, this.agents.publicBaseUrl) as McpCallResult;
        }
        return runResult(await this.agents.wait(scope, started.id, signal, onProgress), this.agents.publicBaseUrl);
      }
    }
    // A reserved name (get_run, decide_approval, an agent's) renames only a site tool whose own name starts
    // as it does (get_run…, decide_approval…, agent__…): any other is resolved against the sites alone.
    const site =
      agentNamed || name.startsWith(GET_RUN_TOOL) || name.startsWith(DECIDE_APPROVAL_TOOL)
        ? (await this.tools(scope)).sites.find((s) => s.listed.name === name)
        : await this.sites.named(scope, name);
    if (site === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No tool named "${name}"`, {
        code: 'NOT_FOUND',
        statusCode: 404,
      });
    }
    return this.sites.call(scope, site, args, onProgress);
  }
}
