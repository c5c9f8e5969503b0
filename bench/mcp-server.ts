/**
 * The MCP server of benchmark 12, in a process of its own (as the minimal apps of adapters.ts): the
 * official v2 server SDK (`createMcpHandler`, speaking 2026-07-28 and the legacy revisions statelessly)
 * over node:https with a certificate of the bench's test CA. One tool, `search_notes`, answering a
 * short text, as the reference site's tool of benchmark 3. Prints `listening <port>` when ready.
 *
 *   node dist/bench/mcp-server.js   (BENCH_MCP_CERT, BENCH_MCP_KEY: PEM)
 */
import https from 'node:https';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';

const INPUT = fromJsonSchema<{ query: string }>({
  type: 'object',
  properties: { query: { type: 'string' } },
  required: ['query'],
});

function server(): McpServer {
  const mcp = new McpServer({ name: 'bench-notes', version: '1.0.0' });
  mcp.registerTool(
    'search_notes',
    { title: 'Search notes', description: 'Finds notes', inputSchema: INPUT, annotations: { readOnlyHint: true } },
    ({ query }) => ({ content: [{ type: 'text', text: `1 note matches ${query}` }] }),
  );
  return mcp;
}

const handler = toNodeHandler(createMcpHandler(server));
const cert = process.env.BENCH_MCP_CERT;
const key = process.env.BENCH_MCP_KEY;
if (!cert || !key) {
  console.error('BENCH_MCP_CERT and BENCH_MCP_KEY (PEM) are required');
  process.exit(2);
}
const listener = https.createServer({ cert, key, keepAliveTimeout: 60_000 }, (req, res) => {
  if (req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  void handler(req, res);
});
listener.listen(0, '127.0.0.1', () => {
  const address = listener.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => listener.close(() => process.exit(0)));
