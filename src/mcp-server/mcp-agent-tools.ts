import { Inject, Injectable } from '@nestjs/common';
import { AgentsService, type AgentResponse } from '../agents/agents.service.js';
import type { AgentEntity } from '../agents/agent.entity.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CreditsService } from '../credits/credits.service.js';
import { RunEnqueueService } from '../runs/run-enqueue.service.js';
import type { RunResponse } from '../runs/run-response.js';
import { RunsService } from '../runs/runs.service.js';
import { validatePayload, payloadSchema } from '../webhooks/webhook-payload.js';
import { requireRole, type Scope } from '../workspaces/scope.js';
import { awaitingOf, waitingWords } from './mcp-approvals.js';
import type { McpCallResult, McpListedTool, ProgressSink } from './mcp-site-tools.js';

/** The tool that reads a run later (its id from an agent tool's answer). */
export const GET_RUN_TOOL = 'get_run';

/** The prefix of every agent tool's name. */
export const AGENT_PREFIX = 'agent__';
const MAX_TOOL_NAME = 64;
const FINAL = new Set(['completed', 'failed', 'cancelled']);
/** How often a waiting agent call looks at its run (the row; the timeline only when progress is asked for). */
const POLL_MS = 500;

export interface AgentTool {
  listed: McpListedTool;
  agentId: string;
  webhook: boolean;
}

function slug(value: string): string {
  return (
    value
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, MAX_TOOL_NAME - AGENT_PREFIX.length - 4) || 'agent'
  );
}

/** The run's final text (its `completed` timeline entry), or undefined. */
function outputOf(run: RunResponse): string | undefined {
  const done = run.timeline?.find((e) => e.type === 'completed') as { output?: string } | undefined;
  return done?.output;
}

/**
 * A run as an agent tool's answer: its output when it completed, its error when it failed, else where it is
 * (and, when it waits for an approval, which call and where to decide).
 */
export function runResult(run: RunResponse, publicBaseUrl?: string): McpCallResult {
  const structured = { runId: run.id, status: run.status } as Record<string, unknown>;
  if (run.status === 'completed') {
    const output = outputOf(run) ?? '';
    return { content: [{ type: 'text', text: output }], structuredContent: { ...structured, output } };
  }
  if (run.status === 'failed' || run.status === 'cancelled') {
    const why = run.error?.error ?? `The run was ${run.status}`;
    return { isError: true, content: [{ type: 'text', text: why }], structuredContent: { ...structured, error: why } };
  }
  const later = `read it later with ${GET_RUN_TOOL} (or the resource agentsite://runs/${run.id})`;
  const awaiting = awaitingOf(run);
  if (awaiting !== null && publicBaseUrl !== undefined) {
    const text = `${waitingWords(run, awaiting, publicBaseUrl)} Then ${later}.`;
    return { content: [{ type: 'text', text }], structuredContent: { ...structured, awaiting } };
  }
  const text = `Run ${run.id} is ${run.status}: ${later}.`;
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * The scope's agents as tools, `agent__<name>` (a numeric suffix separates agents of the same name,
 * in creation order): a call starts a run as POST /api/agents/:id/runs does (the member role, credits,
 * one active run per manual agent, the queue for webhook agents, the tier's limits), then waits up to
 * MCP_RUN_WAIT_SECONDS for its end, sending the timeline's progress when the client asked for it.
 */
@Injectable()
export class McpAgentTools {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly agents: AgentsService,
    private readonly runs: RunsService,
    private readonly enqueuer: RunEnqueueService,
    private readonly credits: CreditsService,
  ) {}

  /** The service's root URL, for links into the console. */
  get publicBaseUrl(): string {
    return this.settings.publicBaseUrl;
  }

  async list(scope: Scope): Promise<AgentTool[]> {
    const { items } = await this.agents.list(scope, { limit: 500 });
    const used = new Set<string>();
    return items.map((agent) => {
      const base = `${AGENT_PREFIX}${slug(agent.name)}`;
      let name = base;
      for (let n = 2; used.has(name); n += 1) {
        name = `${base}_${n}`;
      }
      used.add(name);
      return { agentId: agent.id, webhook: agent.trigger.type === 'webhook', listed: this.listed(agent, name) };
    });
  }

  private listed(agent: AgentResponse, name: string): McpListedTool {
    const inputSchema =
      agent.trigger.type === 'webhook'
        ? { ...payloadSchema(agent.trigger.schema), type: 'object' as const }
        : {
            type: 'object' as const,
            properties: { input: { type: 'string', description: 'What to ask of the agent for this run' } },
          };
    return {
      name,
      title: `Run the agent ${agent.name}`,
      description:
        `Starts a run of the agent "${agent.name}" and answers its output (or, when it takes longer, ` +
        `its run id for ${GET_RUN_TOOL}). ${agent.systemPrompt.slice(0, 300)}`,
      inputSchema,
      outputSchema: {
        type: 'object',
        properties: {
          runId: { type: 'string' },
          status: { type: 'string' },
          output: { type: 'string' },
          error: { type: 'string' },
          awaiting: {
            type: 'object',
            description: 'The tool call the run waits to have approved (decide_approval decides it)',
            properties: {
              approvalId: { type: 'string' },
              site: { type: 'string' },
              tool: { type: 'string' },
              scope: { type: 'string' },
              expiresAt: { type: 'string' },
            },
          },
        },
        required: ['runId', 'status'],
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    };
  }

  /** Starts the agent's run (the REST start's rules); answers the run as queued. */
  async start(scope: Scope, tool: AgentTool, args: Record<string, unknown>): Promise<RunResponse> {
    const agent: AgentEntity = await this.agents.findInScope(scope, tool.agentId);
    requireRole(scope, 'member', 'Running an agent');
    await this.credits.assertCredits(agent.userId);
    if (tool.webhook) {
      const payload = validatePayload(agent.webhookSchema ?? [], args);
      return (await this.enqueuer.enqueueWebhook(agent, { payload })).run;
    }
    const input = typeof args.input === 'string' && args.input !== '' ? args.input : null;
    return (await this.enqueuer.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy', input })).run;
  }

  /**
   * Waits for the run's end, up to MCP_RUN_WAIT_SECONDS (`seconds`) or the request's end, sending one progress
   * notification per new timeline entry; answers the run as it is then (with its timeline when it ended).
   */
  async wait(
    scope: Scope,
    runId: string,
    signal: AbortSignal,
    onProgress?: ProgressSink,
    seconds = this.settings.mcpServer.runWaitSeconds,
  ): Promise<RunResponse> {
    const deadline = Date.now() + seconds * 1000;
    let seen = 0;
    for (;;) {
      const run = await this.runs.findInScope(scope, runId);
      const report = (timeline: Array<{ type: string }>): void => {
        for (const entry of timeline.slice(seen)) {
          seen += 1;
          onProgress?.({ progress: seen, message: progressMessage(entry) });
        }
      };
      if (FINAL.has(run.status)) {
        // The entries not reported yet too: a run quicker than one look still tells what it did.
        const ended = await this.runs.describe(run);
        report(ended.timeline ?? []);
        return ended;
      }
      if (onProgress !== undefined && run.status === 'active') {
        report(await this.runs.timeline(run));
      }
      // A run that waits for a person's decision answers at once: holding the call would only keep the
      // client from deciding (decide_approval) for MCP_RUN_WAIT_SECONDS.
      if (run.status === 'active' && (run as { awaiting?: unknown }).awaiting) {
        return this.runs.describe(run);
      }
      if (Date.now() + POLL_MS > deadline || signal.aborted) {
        return { ...(await this.runs.describe(run)) };
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** A run of the scope (RUN_NOT_FOUND otherwise), with its timeline: what get_run and the run resource answer. */
  async describe(scope: Scope, runId: string): Promise<RunResponse> {
    return this.runs.describe(await this.runs.findInScope(scope, runId));
  }

  /** Cancels a run of the scope (the member role; RUN_NOT_CANCELLABLE once it ended). */
  async cancel(scope: Scope, runId: string): Promise<RunResponse> {
    const run = await this.runs.findInScope(scope, runId);
    requireRole(scope, 'member', 'Cancelling a run');
    return this.runs.cancel(run);
  }
}

interface ProgressEntry {
  type: string;
  tool?: string;
  site?: string;
  decision?: string;
  by?: { name: string } | null;
}

/** A timeline entry in a few words (no run data: types, tool and site names, who decided). */
export function progressMessage(entry: ProgressEntry): string {
  switch (entry.type) {
    case 'approval_requested':
      return `Waiting for approval to call ${entry.tool ?? 'a tool'} of ${entry.site ?? 'a site'}`;
    case 'approval_decided':
      return entry.decision === 'approve'
        ? `Approved${entry.by ? ` by ${entry.by.name}` : ''}`
        : entry.decision === 'deny'
          ? `Denied${entry.by ? ` by ${entry.by.name}` : ''}`
          : entry.decision === 'cancelled'
            ? 'The run was cancelled while it waited for approval'
            : 'No decision in time: the call was not made';
    case 'tool_call':
      return `Calling ${entry.tool ?? 'a tool'} of ${entry.site ?? 'a site'}`;
    case 'tool_result':
      return `${entry.tool ?? 'A tool'} answered`;
    case 'model_turn':
      return 'The model answered';
    default:
      return entry.type.replace(/_/g, ' ');
  }
}
