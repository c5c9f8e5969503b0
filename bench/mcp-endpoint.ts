/**
 * Benchmark 13: a site tool call through agentsite's own MCP endpoint (`tools/call` on `/mcp`, made
 * with the official SDK client as an MCP client would make it) vs the same call through the REST
 * route (`POST /api/vault/sites/:id/tools/:tool/call`), in alternating rounds, against the same API
 * process and the same reference site. Both carry the user's API token (the bench's stack runs with
 * MCP_ALLOW_API_TOKENS=true): the token check is not what is measured, the endpoint's path is.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { post } from './client.js';
import { clockTicks, cpuMs } from './scale.js';
import { fmt, interleaved, line, load, percentile, verdict } from './stats.js';

export interface McpEndpointBenchContext {
  baseUrl: string;
  userToken: string;
  apiPid: number;
  /** The reference site's id in the user's vault, connected with an API token of the site. */
  siteId: string;
}

export async function mcpEndpointCall(ctx: McpEndpointBenchContext): Promise<void> {
  const auth = { authorization: `Bearer ${ctx.userToken}` };
  const viaRest = async (): Promise<void> => {
    const res = await post(
      `${ctx.baseUrl}/api/vault/sites/${ctx.siteId}/tools/search_notes/call`,
      { input: { query: 'x' } },
      auth,
    );
    if (res.status !== 200) {
      throw new Error(`the REST tool call answered ${res.status} ${res.text}`);
    }
  };
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  // Counts the HTTP requests the SDK client makes (a call is one POST when nothing else is asked).
  let requests = 0;
  const counted: typeof fetch = (input, init) => {
    requests += 1;
    return fetch(input, init);
  };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ctx.baseUrl}/mcp`), {
      requestInit: { headers: auth },
      fetch: counted,
    }),
  );
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name.endsWith('__search_notes'))?.name;
  if (tool === undefined) {
    throw new Error(`/mcp lists no search_notes tool: ${tools.map((t) => t.name).join(', ')}`);
  }
  const viaMcp = async (): Promise<void> => {
    const result = await client.callTool({ name: tool, arguments: { query: 'x' } });
    if (result.isError === true) {
      throw new Error(`the /mcp tool call failed: ${JSON.stringify(result.content)}`);
    }
  };
  try {
    const N13 = 300;
    await load(50, 1, viaRest);
    await load(50, 1, viaMcp);
    const [mcp, rest] = await interleaved(6, N13 / 6, 1, [viaMcp, viaRest]);
    // CPU of the API process a call, each way, over calls one after another.
    const ticks = clockTicks();
    const cpuPerCall = async (call: () => Promise<void>): Promise<number> => {
      const before = cpuMs(ctx.apiPid, ticks);
      await load(N13, 1, call);
      return (cpuMs(ctx.apiPid, ticks) - before) / N13;
    };
    const before = requests;
    const mcpCpu = await cpuPerCall(viaMcp);
    const requestsPerCall = (requests - before) / N13;
    const restCpu = await cpuPerCall(viaRest);
    const p = (r: { latencies: number[] }, q: number): number => percentile(r.latencies, q);
    const ratio50 = p(mcp!, 50) / p(rest!, 50);
    const ratio99 = p(mcp!, 99) / p(rest!, 99);
    line('13. site tool call through /mcp (SDK client) vs through POST …/tools/:tool/call', {
      goal: '≤1.2× p50 and p99',
      mcp_p50: fmt(p(mcp!, 50)),
      rest_p50: fmt(p(rest!, 50)),
      ratio_p50: ratio50.toFixed(2),
      mcp_p99: fmt(p(mcp!, 99)),
      rest_p99: fmt(p(rest!, 99)),
      ratio_p99: ratio99.toFixed(2),
      verdict: verdict(ratio50 <= 1.2 && ratio99 <= 1.2),
      era: client.getProtocolEra() ?? 'unknown',
      http_requests_per_mcp_call: requestsPerCall.toFixed(2),
      api_cpu_per_call_mcp: fmt(mcpCpu),
      api_cpu_per_call_rest: fmt(restCpu),
    });
  } finally {
    await client.close();
  }
}
