#!/usr/bin/env node
/**
 * The command the official MCP conformance suite drives (`@modelcontextprotocol/conformance client
 * --command "node dist/scripts/mcp-conformance-client.js"`): the suite starts a scenario's servers,
 * runs this command with the MCP server's URL as its last argument and the scenario's name in
 * MCP_CONFORMANCE_SCENARIO (and, for some, data in MCP_CONFORMANCE_CONTEXT), then judges what the
 * command sent. It plays the service: the service's MCP client lists and calls tools, the service's
 * OAuth code discovers, registers, authorizes (the suite's authorization server approves at once:
 * this command reads its redirect as the browser would) and exchanges the code, with step-up on
 * `insufficient_scope` as the service does it (once; never a loop).
 *
 * The suite's servers are plain http on localhost: this command, and only it, lets the service's
 * HTTP client speak http to loopback addresses (as `agentsite-check --allow-private` allows private
 * ones). Exit status: 0 when the scenario's steps went through, 1 otherwise, 2 for a bad command line.
 */
import type { ScenarioInput } from './mcp-conformance/scenarios.js';

const USAGE = `usage: node dist/scripts/mcp-conformance-client.js <MCP server URL>
  The command the MCP conformance suite runs for each client scenario:
    node node_modules/@modelcontextprotocol/conformance/dist/index.js client \\
      --command "node dist/scripts/mcp-conformance-client.js" --scenario <name>
  (or npm run mcp:conformance -- --scenario <name>). The suite appends the server's URL and sets
  MCP_CONFORMANCE_SCENARIO (initialize, tools_call, auth/…) and, for some scenarios,
  MCP_CONFORMANCE_CONTEXT (JSON: the pre-registered client of auth/pre-registration).
  Plain http is allowed to loopback hosts only (the suite's servers); nothing else is reached.`;

function parse(argv: string[], env: NodeJS.ProcessEnv): ScenarioInput | 'help' | string {
  if (argv.includes('--help') || argv.includes('-h')) {
    return 'help';
  }
  const url = argv.at(-1);
  if (argv.length !== 1 || url === undefined) {
    return 'give exactly one argument: the MCP server URL';
  }
  const scenario = env.MCP_CONFORMANCE_SCENARIO ?? 'tools_call';
  let context: Record<string, unknown> = {};
  if (env.MCP_CONFORMANCE_CONTEXT) {
    try {
      context = JSON.parse(env.MCP_CONFORMANCE_CONTEXT) as Record<string, unknown>;
    } catch {
      return 'MCP_CONFORMANCE_CONTEXT is not JSON';
    }
  }
  return { url, scenario, context };
}

async function main(): Promise<number> {
  const parsed = parse(process.argv.slice(2), process.env);
  if (parsed === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (typeof parsed === 'string') {
    console.error(`${parsed}\n${USAGE}`);
    return 2;
  }
  try {
    // Loaded after the command line is read: --help needs none of the service.
    const { runScenario } = await import('./mcp-conformance/scenarios.js');
    const steps = await runScenario(parsed, (line) => console.log(line));
    console.log(`done: ${steps}`);
    return 0;
  } catch (err) {
    console.error(`failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
