/**
 * What the conformance command does for each client scenario of the MCP conformance suite, in the
 * service's order: list the tools (the service's "probe" when a server is added), call one, and when
 * the server asks for authorization, discover, register, authorize and exchange, then list and call
 * again with the token. A 403 `insufficient_scope` on a call is stepped up once: the service stores
 * the scope the server named on the credential and says which scope is missing, the user connects
 * again (the service then asks for the union); a second refusal ends the command, as the service
 * never loops.
 */
import type { McpAuthorization } from '../../src/sites/mcp-state.js';
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
  let authorization: McpAuthorization | null = null;
  /** The service's connection after a 401 (discovery once, as when the site was added), or a step-up. */
  const connect = async (challenge: McpChallengeLike, stepUp: boolean): Promise<void> => {
    if (authorization === null) {
      authorization = await mcp.discover(input.url, challenge);
      if (authorization === null) {
        throw new Error(`the server answered ${challenge.status} without an authorization server to ask`);
      }
      log(`authorization server: ${authorization.issuer}`);
    }
    token = await mcp.authorize(authorization, stepUp ? (challenge.scope ?? '') : null);
    steps.push(stepUp ? 'stepped up' : 'authorized');
  };
  let listed = await mcp.probe(input.url, token);
  if (listed.kind === 'unauthorized') {
    await connect(listed.challenge, false);
    listed = await mcp.probe(input.url, token);
    if (listed.kind === 'unauthorized') {
      // A token refused for the listing itself: one step-up with the scope the server named, as a
      // reconnect after the service reported it; then the service gives up.
      await connect(listed.challenge, true);
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
    // The service stores the 403's scope on the credential (step-up) and says so; the user reconnects.
    await connect(answer.challenge, true);
    answer = await mcp.call(input.url, token, tool.name, arguments_);
    if (answer.kind === 'unauthorized') {
      throw new Error(`the server refused the call again after a step-up (${answer.challenge.status})`);
    }
  }
  steps.push(`called ${tool.name}${answer.isError ? ' (an error result)' : ''}`);
  log(`result: ${answer.text}`);
  return steps.join(', ');
}
