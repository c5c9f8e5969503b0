/**
 * Benchmark 13: a site tool call through agentsite's own MCP endpoint (`tools/call` on `/mcp`, made
 * with the official SDK client as an MCP client would make it) vs the same call through the REST
 * route (`POST /api/vault/sites/:id/tools/:tool/call`), in alternating rounds, against the same API
 * process and the same reference site. Both carry the user's API token (the bench's stack runs with
 * MCP_ALLOW_API_TOKENS=true): the token check is not what is measured, the endpoint's path is.
 *
 * The floor, in the same alternating rounds: the minimal app (adapters.ts) making the same call through
 * the same MCP server SDK mounted the same way (`/mcp`, the same SDK client) and through its plain route
 * (`POST /api/tool`). What the SDK's layer costs without the service is the floor's ratio; what the
 * service adds to it is the difference of the two differences (MCP minus REST, service minus floor).
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
  /** The minimal app with the floor's routes (adapters.ts), and its process. */
  floorUrl: string;
  floorPid: number;
}

/** An SDK client of `url`'s MCP endpoint, counting its HTTP requests, and the name of its search_notes tool. */
async function mcpClient(
  url: string,
  headers: Record<string, string>,
): Promise<{ client: Client; tool: string; requests: () => number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  // Counts the HTTP requests the SDK client makes (a call is one POST when nothing else is asked).
  let requests = 0;
  const counted: typeof fetch = (input, init) => {
    requests += 1;
    return fetch(input, init);
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: counted }));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name.endsWith('__search_notes'))?.name;
  if (tool === undefined) {
    await client.close();
    throw new Error(`${url} lists no search_notes tool: ${tools.map((t) => t.name).join(', ')}`);
  }
  return { client, tool, requests: () => requests };
}

/** One tool call through an SDK client, failing on an error result. */
function caller({ client, tool }: { client: Client; tool: string }): () => Promise<void> {
  return async () => {
    const result = await client.callTool({ name: tool, arguments: { query: 'x' } });
    if (result.isError === true) {
      throw new Error(`the MCP tool call failed: ${JSON.stringify(result.content)}`);
    }
  };
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
  const service = await mcpClient(`${ctx.baseUrl}/mcp`, auth);
  const floor = await mcpClient(`${ctx.floorUrl}/mcp`, { authorization: 'Bearer x' });
  const viaMcp = caller(service);
  const floorMcp = caller(floor);
  const floorRest = async (): Promise<void> => {
    const res = await post(`${ctx.floorUrl}/api/tool`, { input: { query: 'x' } }, { authorization: 'Bearer x' });
    if (res.status !== 200) {
      throw new Error(`the floor's tool route answered ${res.status} ${res.text}`);
    }
  };
  try {
    const N13 = 300;
    await load(50, 1, viaRest);
    await load(50, 1, viaMcp);
    await load(50, 1, floorRest);
    await load(50, 1, floorMcp);
    const [mcp, rest, fMcp, fRest] = await interleaved(6, N13 / 6, 1, [viaMcp, viaRest, floorMcp, floorRest]);
    // CPU of the server's process a call (the API's, or the floor's), over calls one after another.
    const ticks = clockTicks();
    // And the bench's own process a call (the clients; the reference site too, the same for every side).
    const clientCpu = new Map<() => Promise<void>, number>();
    const cpuPerCall = async (pid: number, call: () => Promise<void>): Promise<number> => {
      const before = cpuMs(pid, ticks);
      const own = process.cpuUsage();
      await load(N13, 1, call);
      const spent = process.cpuUsage(own);
      clientCpu.set(call, (spent.user + spent.system) / 1000 / N13);
      return (cpuMs(pid, ticks) - before) / N13;
    };
    const before = service.requests();
    const mcpCpu = await cpuPerCall(ctx.apiPid, viaMcp);
    const requestsPerCall = (service.requests() - before) / N13;
    const restCpu = await cpuPerCall(ctx.apiPid, viaRest);
    const floorMcpCpu = await cpuPerCall(ctx.floorPid, floorMcp);
    const floorRestCpu = await cpuPerCall(ctx.floorPid, floorRest);
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
      era: service.client.getProtocolEra() ?? 'unknown',
      http_requests_per_mcp_call: requestsPerCall.toFixed(2),
      api_cpu_per_call_mcp: fmt(mcpCpu),
      api_cpu_per_call_rest: fmt(restCpu),
      // The floor: the same SDK server and client around the same call in the minimal app.
      floor_mcp_p50: fmt(p(fMcp!, 50)),
      floor_rest_p50: fmt(p(fRest!, 50)),
      floor_ratio_p50: (p(fMcp!, 50) / p(fRest!, 50)).toFixed(2),
      floor_ratio_p99: (p(fMcp!, 99) / p(fRest!, 99)).toFixed(2),
      floor_cpu_per_call_mcp: fmt(floorMcpCpu),
      floor_cpu_per_call_rest: fmt(floorRestCpu),
      // The client's side: the SDK client against a plain POST (the bench process, floor's rounds).
      bench_cpu_per_call_floor_mcp: fmt(clientCpu.get(floorMcp)!),
      bench_cpu_per_call_floor_rest: fmt(clientCpu.get(floorRest)!),
      // What the service's MCP layer adds over its REST route, beyond what the SDK's adds in the floor.
      service_mcp_added_over_floor_p50: fmt(p(mcp!, 50) - p(rest!, 50) - (p(fMcp!, 50) - p(fRest!, 50))),
      service_mcp_cpu_added_over_floor: fmt(mcpCpu - restCpu - (floorMcpCpu - floorRestCpu)),
    });
  } finally {
    await service.client.close();
    await floor.client.close();
  }
}
