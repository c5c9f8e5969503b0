/**
 * What the conformance command does for each client scenario of the MCP conformance suite, in the
 * service's order: list the tools (the service's "probe" when a server is added), call one, and when
 * the server asks for authorization, discover, register, authorize and exchange, then list and call
 * again with the token. A 403 `insufficient_scope` on a call is stepped up once with the scope the
 * server named (the user reconnecting after the service said which scope is missing); a second
 * refusal ends the command, as the service never loops.
 */
import { type ConformanceService, conformanceService, type McpChallengeLike } from './service.js';

export interface ScenarioInput {
  /** The MCP server URL the suite gave. */
  url: string;
  /** MCP_CONFORMANCE_SCENARIO. */
  scenario: string;
  /** MCP_CONFORMANCE_CONTEXT, parsed ({} when absent). */
  context: Record<string, unknown>;
}

export type Log = (line: string) => void;

/** A sample input for a tool's JSON Schema: each required property given a value of its type. */
export function sampleInput(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const properties = (schema?.properties ?? {}) as Record<string, { type?: string; enum?: unknown[] }>;
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  const input: Record<string, unknown> = {};
  for (const name of required) {
    const property = properties[name] ?? {};
    if (Array.isArray(property.enum) && property.enum.length > 0) {
      input[name] = property.enum[0];
      continue;
    }
    switch (property.type) {
      case 'number':
      case 'integer':
        input[name] = 2;
        break;
      case 'boolean':
        input[name] = true;
        break;
      case 'array':
        input[name] = [];
        break;
      case 'object':
        input[name] = {};
        break;
      default:
        input[name] = 'x';
    }
  }
  return input;
}

/** Runs the scenario; resolves with a summary of its steps, rejects when one failed. */
export async function runScenario(input: ScenarioInput, log: Log, service?: ConformanceService): Promise<string> {
  const mcp = service ?? (await conformanceService(input.context));
  try {
    return await run(input, log, mcp);
  } finally {
    await mcp.close();
  }
}

async function run(input: ScenarioInput, log: Log, mcp: ConformanceService): Promise<string> {
  const steps: string[] = [];
  let token: string | null = null;
  let scope: string | null = null;
  let listed = await mcp.probe(input.url, token);
  if (listed.kind === 'unauthorized') {
    ({ token, scope } = await connect(input, mcp, listed.challenge, null, log));
    steps.push('authorized');
    listed = await mcp.probe(input.url, token);
    if (listed.kind === 'unauthorized') {
      // A token refused for the listing itself: one step-up with the scope the server named, as a
      // reconnect after the service reported it; then the service gives up.
      ({ token, scope } = await connect(input, mcp, listed.challenge, scope, log));
      steps.push('stepped up');
      listed = await mcp.probe(input.url, token);
      if (listed.kind === 'unauthorized') {
        throw new Error(`the server refused the token again after a step-up (${listed.challenge.status})`);
      }
    }
  }
  steps.push(`listed ${listed.tools.length} tool(s)`);
  log(`tools: ${listed.tools.map((t) => t.name).join(', ') || '(none)'}`);
  if (input.scenario === 'initialize' || listed.tools.length === 0) {
    return steps.join(', ');
  }
  const tool = listed.tools[0]!;
  const arguments_ = sampleInput(tool.inputSchema);
  let answer = await mcp.call(input.url, token, tool.name, arguments_);
  if (answer.kind === 'unauthorized') {
    ({ token } = await connect(input, mcp, answer.challenge, scope, log));
    steps.push('stepped up');
    answer = await mcp.call(input.url, token, tool.name, arguments_);
    if (answer.kind === 'unauthorized') {
      throw new Error(`the server refused the call again after a step-up (${answer.challenge.status})`);
    }
  }
  steps.push(`called ${tool.name}${answer.isError ? ' (an error result)' : ''}`);
  log(`result: ${answer.text}`);
  return steps.join(', ');
}

/**
 * Discovery, registration, authorization and the code's exchange for a token, with the scope the
 * service asks for: the challenge's, else the metadata's scopes_supported, else none; on a step-up
 * (a previous scope), the union of the previous scope and the challenge's.
 */
async function connect(
  input: ScenarioInput,
  mcp: ConformanceService,
  challenge: McpChallengeLike,
  previousScope: string | null,
  log: Log,
): Promise<{ token: string; scope: string | null }> {
  const authorization = await mcp.discover(input.url, challenge);
  if (authorization === null) {
    throw new Error(`the server answered ${challenge.status} without an authorization server to ask`);
  }
  log(`authorization server: ${authorization.issuer}`);
  const fromServer = challenge.scope ?? authorization.scopesSupported?.join(' ') ?? null;
  const scope = previousScope === null ? fromServer : union(previousScope, challenge.scope);
  const token = await mcp.authorize(authorization, scope === '' ? null : scope);
  return { token, scope };
}

function union(a: string | null, b: string | null): string | null {
  const all = [...(a ?? '').split(' '), ...(b ?? '').split(' ')].filter((s) => s !== '');
  return all.length === 0 ? null : [...new Set(all)].join(' ');
}
