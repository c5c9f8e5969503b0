/**
 * Benchmark 12: an MCP tool call through the API (`POST …/tools/:tool/call` on an MCP server added
 * to the vault) vs the same call made with the official SDK client directly (one connected `Client`,
 * `callTool`), in alternating rounds, against the same MCP server (bench/mcp-server.ts, the v2 server
 * SDK over HTTPS with the bench's test CA, in a process of its own).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { issueServerCert, type TestCa } from '../examples/site/tls.js';
import type { Http } from '../test/utils/http.js';
import { post } from './client.js';
import { clockTicks, cpuMs } from './scale.js';
import { fmt, interleaved, line, load, percentile, verdict } from './stats.js';

export interface McpBenchServer {
  url: string;
  /** The host:port the API must allow (SITE_ALLOW_PRIVATE_HOSTS). */
  allow: string;
  child: ChildProcess;
}

/** Starts bench/mcp-server.ts with a certificate of the test CA; resolves once it listens. */
export async function startMcpServer(ca: TestCa): Promise<McpBenchServer> {
  const { cert, key } = await issueServerCert(ca);
  const child = spawn(process.execPath, [fileURLToPath(new URL('./mcp-server.js', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_MCP_CERT: cert, BENCH_MCP_KEY: key },
  });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening (\d+)/.exec(out);
      if (found) {
        resolve(found[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`the bench's MCP server exited (${code})`)));
  });
  return { url: `https://localhost:${port}/mcp`, allow: `localhost:${port}`, child };
}

export interface McpBenchContext {
  api: Http;
  baseUrl: string;
  userToken: string;
  apiPid: number;
  ca: TestCa;
  server: McpBenchServer;
}

export async function mcpToolCall(ctx: McpBenchContext): Promise<void> {
  const added = await ctx.api.post(
    '/api/vault/sites',
    { url: ctx.server.url, protocol: 'mcp' },
    { token: ctx.userToken },
  );
  if (added.status !== 201) {
    throw new Error(`adding the MCP server answered ${added.status} ${JSON.stringify(added.body)}`);
  }
  const siteId = added.body.id as string;
  const auth = { authorization: `Bearer ${ctx.userToken}` };
  const viaApi = async (): Promise<void> => {
    const res = await post(
      `${ctx.baseUrl}/api/vault/sites/${siteId}/tools/search_notes/call`,
      { input: { query: 'x' } },
      auth,
    );
    if (res.status !== 200) {
      throw new Error(`the MCP tool call answered ${res.status} ${res.text}`);
    }
  };
  // The SDK client directly: the platform's fetch, trusting the bench's CA (this process only).
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), ctx.ca.cert]);
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(ctx.server.url)));
  const direct = async (): Promise<void> => {
    const result = await client.callTool({ name: 'search_notes', arguments: { query: 'x' } });
    if (result.isError === true) {
      throw new Error(`the direct MCP call failed: ${JSON.stringify(result.content)}`);
    }
  };
  try {
    const N12 = 300;
    await load(50, 1, viaApi);
    await load(50, 1, direct);
    const [service, base] = await interleaved(6, N12 / 6, 1, [viaApi, direct]);
    const ticks = clockTicks();
    const before = cpuMs(ctx.apiPid, ticks);
    await load(N12, 1, viaApi);
    const apiCpu = (cpuMs(ctx.apiPid, ticks) - before) / N12;
    // The SDK client's own CPU a call (this process makes the direct calls and nothing else meanwhile).
    const sdkBefore = process.cpuUsage();
    await load(N12, 1, direct);
    const sdkUsed = process.cpuUsage(sdkBefore);
    const sdkCpu = (sdkUsed.user + sdkUsed.system) / 1000 / N12;
    const p = (r: { latencies: number[] }, q: number): number => percentile(r.latencies, q);
    line('12. MCP tool call via POST …/tools/:tool/call vs the SDK client directly', {
      goal: '≤+1 ms p50',
      verdict: verdict(p(service!, 50) - p(base!, 50) <= 1),
      service_p50: fmt(p(service!, 50)),
      sdk_p50: fmt(p(base!, 50)),
      added_p50: fmt(p(service!, 50) - p(base!, 50)),
      ratio_p50: (p(service!, 50) / p(base!, 50)).toFixed(2),
      service_p99: fmt(p(service!, 99)),
      sdk_p99: fmt(p(base!, 99)),
      ratio_p99: (p(service!, 99) / p(base!, 99)).toFixed(2),
      era: client.getProtocolEra() ?? 'unknown',
      api_cpu_per_call: fmt(apiCpu),
      sdk_client_cpu_per_call: fmt(sdkCpu),
    });
  } finally {
    await client.close();
  }
}
