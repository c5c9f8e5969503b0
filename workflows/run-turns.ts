/**
 * A run's turns: what a model turn and a tool call take and give, and the limits that keep a run's
 * conversation within what Temporal carries. Part of the contracts (contracts.ts re-exports it);
 * imported by workflow code, so only deterministic imports here.
 */
import type { ApprovalPolicy, NotificationEvent } from './approvals.js';
import type { RunLogIds, RunRequest } from './run-request.js';
import { TOOL_RESULT_LIMIT_BYTES, type ToolResultContentBlock } from './tool-results.js';

export * from './tool-results.js';

/** What the model sees of a tool (its name is unique across the agent's sites). */
export interface ModelTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** Where a call of a run's tool goes: the model's name of it → the site tool it stands for. */
export interface RunToolRoute {
  /** The model's name of the tool. */
  name: string;
  siteId: string;
  siteName: string;
  /** The site's own name of the tool (the model's name may have been mapped to fit its pattern). */
  tool: string;
  /** An MCP server's tool: its results are content blocks (modelContentOf). Absent: an agentsite site's. */
  protocol?: 'mcp';
  /** The scope the call needs (deriveScope: the manifest's, an MCP tool's annotations, else its name). */
  scope?: 'read' | 'write' | 'delete' | 'admin';
}

/** A model tool and the site tool it stands for. */
export interface RunTool extends ModelTool, RunToolRoute {
  name: string;
}

/**
 * What the model is shown of a run besides its conversation: the system prompt and the tools. Stored
 * once per distinct content in PostgreSQL (run_tool_sets, named by the sha256 of its canonical JSON)
 * when the run starts; the workflow carries only that hash, so tool definitions (up to megabytes with
 * several sites at the manifest limits) never travel through Temporal.
 */
export interface RunToolSet {
  system: string;
  tools: RunTool[];
}

/** The route of a tool (a RunTool without what the model is shown of it). */
export function routeOf(tool: RunTool): RunToolRoute {
  return {
    name: tool.name,
    siteId: tool.siteId,
    siteName: tool.siteName,
    tool: tool.tool,
    ...(tool.protocol !== undefined ? { protocol: tool.protocol } : {}),
    ...(tool.scope !== undefined ? { scope: tool.scope } : {}),
  };
}

/** The routes of the tools an answer calls, of those the run has (each once). */
export function routesFor(content: ModelContentBlock[], tools: RunTool[]): RunToolRoute[] {
  const called = new Set(content.flatMap((b) => (b.type === 'tool_use' ? [b.name] : [])));
  return tools.filter((t) => called.has(t.name)).map(routeOf);
}

/** What the model is shown of a run's tools (RunTool without the site it stands for). */
export function modelToolsOf(tools: RunTool[]): ModelTool[] {
  return tools.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
}

/**
 * What turn 1 returns and the workflow carries into the run's later turns. Today's shape names the
 * run's tool set by its hash (`toolSet`); the routes of the tools the model calls come back with each
 * turn's answer (ModelTurnOutput.routes). Runs started before tool sets were stored (their workflow
 * did not ask for them: ModelTurnInput.toolSets) carry `system` and `tools` themselves.
 */
export interface RunContext {
  model: string;
  /** The sha256 (hex) of the run's tool set (RunToolSet), read by each model turn. */
  toolSet?: string;
  /** The old shape: the system prompt, carried with every turn. */
  system?: string;
  /** The old shape: the tools, definitions included, carried with every turn. */
  tools?: RunTool[];
  /** The agent's approval policy when it has one (a call whose scope is listed waits for a decision). */
  approvals?: ApprovalPolicy;
  /** The events the agent notifies of (its `notify.events`); absent: none. */
  notify?: NotificationEvent[];
}

export type ModelContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  /** An agentsite site's answer as JSON text; an MCP tool's result as content blocks (tool-results.ts). */
  content: string | ToolResultContentBlock[];
  is_error?: boolean;
}

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string | Array<ModelContentBlock | ToolResultBlock>;
}

/** One call of the model for a run (what the model port takes). */
export interface ModelCall {
  runId: string;
  userId: string;
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  /** `messages` lacks the run's trigger: the turn reads it from the run's row and puts it first. */
  triggerFromRow?: boolean;
}

/**
 * A run's model turn. The run's bookkeeping rides on its turns instead of separate steps (each local
 * activity cost about 30 ms of workflow task here): turn 1 marks the run active and prepares its
 * context, and the turn that ends the run marks it completed.
 */
export interface ModelTurnInput extends RunLogIds {
  runId: string;
  userId: string;
  /**
   * The conversation so far, without its first message, the run's trigger, which the activity builds
   * from the run's row (triggerMessage): a webhook's payload or a manual run's text is not carried
   * through Temporal on every turn.
   */
  messages: ModelMessage[];
  /** Turn 1: the run's request (the turn starts the run and returns its context). */
  start?: RunRequest;
  /** Later turns: the context turn 1 returned. */
  context?: RunContext;
  /**
   * Turn 1: the workflow takes the context by its tool set's hash (RunContext.toolSet). Absent: a
   * workflow of the old code (patched('run-tool-sets') false), which gets the tools themselves.
   */
  toolSets?: true;
  /** The turn limit: the run ends with this turn whatever the model answers. */
  last: boolean;
}

export interface ModelTurnOutput {
  content: ModelContentBlock[];
  text: string;
  stopReason: string;
  usage: { inputTokens: number; outputTokens: number };
  credits: number;
  /** Turn 1: the run's context. */
  context?: RunContext;
  /**
   * A run carrying its tool set by hash: the routes of the tools this answer calls that the run has
   * (a name the set lacks has none; the workflow answers the model that there is no such tool).
   */
  routes?: RunToolRoute[];
  /** This turn ended the run, and the run's row already says `completed`. */
  ended?: boolean;
}

/** Whether a model answer ends the run (no tool to call, or no turn left). */
export function endsRun(answer: Pick<ModelTurnOutput, 'content' | 'stopReason'>, last: boolean): boolean {
  return last || answer.stopReason !== 'tool_use' || !answer.content.some((b) => b.type === 'tool_use');
}

export interface CallToolInput extends RunLogIds {
  runId: string;
  userId: string;
  siteId: string;
  siteName: string;
  tool: string;
  input: unknown;
}

export interface CallToolOutput {
  /**
   * The site's answer; with `truncated`, the first MAX_TOOL_RESULT_BYTES of its JSON text, as a string.
   * An MCP tool's `{content, structuredContent?}`; with `truncated`, the blocks that fit (keptResult).
   */
  result: unknown;
  durationMs: number;
  refreshed: boolean;
  /** The answer's JSON was longer than MAX_TOOL_RESULT_BYTES: its length in bytes. */
  truncated?: number;
}

/**
 * The patch that moved tool definitions out of the workflow's payloads: a run started under it asks
 * turn 1 for its context by tool set hash (ModelTurnInput.toolSets); one that started before carries
 * the tools themselves, as it recorded them.
 */
export const RUN_TOOL_SETS_PATCH = 'run-tool-sets';

/** Ends a run early: turns of the model per run. */
export const MAX_MODEL_TURNS = 20;

/**
 * The most of a tool's answer a run keeps (bytes of its JSON text): more would not fit the model's
 * context anyway, and every later turn of the run carries the conversation through Temporal, whose
 * payloads are limited (2 MB by default). A longer answer reaches the model and the timeline cut to
 * this, with a note of its length (toolResultContent, mcpResultContent in tool-results.ts).
 */
export const MAX_TOOL_RESULT_BYTES = TOOL_RESULT_LIMIT_BYTES;

/**
 * What one model turn's input may carry of the conversation (bytes of its JSON): under Temporal's
 * default payload limit (2 MB) with room for the run's context. A run whose conversation outgrows it
 * fails (MODEL_ERROR, saying so) rather than give Temporal a command it would refuse, which would stop
 * the agent's queue with every run behind it.
 */
export const MAX_TURN_INPUT_BYTES = 1_500_000;

/**
 * The longest durable wait a site's Retry-After (or our outgoing limit) may impose on a run's tool call:
 * past it the call fails instead, so one site cannot park an agent's queue for days.
 */
export const MAX_DURABLE_WAIT_SECONDS = 300;
/** Times a run waits out a rate limit for one tool call before giving the model an error. */
export const MAX_RATE_LIMIT_WAITS = 5;
/** The timer summary that marks a rate-limit wait in the history (the timeline shows it as `waiting`). */
export const RATE_LIMIT_TIMER_SUMMARY = 'rate_limit';
