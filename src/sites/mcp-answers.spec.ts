import { describe, expect, it } from '@jest/globals';
import { observed, type OperationContext, operations } from './mcp-answers.js';

describe('the MCP client fetch wrapper', () => {
  const sent: Array<{ body: unknown; idempotencyKey: string | null }> = [];
  const base = async (_url: string | URL, init?: RequestInit): Promise<Response> => {
    sent.push({ body: init?.body, idempotencyKey: new Headers(init?.headers).get('idempotency-key') });
    const body = String(init?.body);
    return body.includes('"tools/call"')
      ? new Response('{}', { status: 429, headers: { 'retry-after': '7' } })
      : new Response('{}', { status: 200 });
  };

  it('sends the idempotency key on the tools/call POST only, and records what a failed answer said', async () => {
    const context: OperationContext = { idempotencyKey: 'run-1:step-2' };
    const fetchFn = observed(base);
    await operations.run(context, async () => {
      await fetchFn('https://mcp.example.com/mcp', {
        method: 'POST',
        headers: { 'mcp-session-id': 's1' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      });
      expect(context.failure).toBeUndefined();
      await fetchFn('https://mcp.example.com/mcp', {
        method: 'POST',
        headers: { 'mcp-session-id': 's1' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x' } }),
      });
    });
    expect(sent.map((s) => s.idempotencyKey)).toEqual([null, 'run-1:step-2']);
    expect(context.failure).toEqual({ status: 429, wwwAuthenticate: null, retryAfter: '7', sentSession: true });
  });
});
