import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { EverythingPeer } from '../fixtures/mcp/everything-peer.js';
import { McpWorld } from '../fixtures/mcp/mcp-world.js';
import type { ScriptedPeer } from '../fixtures/mcp/scripted-peer.js';
import { expectError } from '../utils/http.js';
import type { TestUser } from '../utils/users.js';

const OBJECT = { type: 'object', properties: {} };
const TOOLS = [
  { name: 'fail', inputSchema: OBJECT },
  { name: 'refuse', inputSchema: OBJECT },
  { name: 'big', inputSchema: OBJECT },
  {
    name: 'count',
    inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
  },
];
const LARGE = 'x'.repeat(1024 * 1024);

/** Scripted answers: an isError result, a JSON-RPC error, a large result, an echo. */
function answer(name: string, args: Record<string, unknown>): Record<string, unknown> {
  switch (name) {
    case 'fail':
      return { isError: true, content: [{ type: 'text', text: 'the disk is full' }] };
    case 'refuse':
      throw Object.assign(new Error('count must be below 10'), { code: -32602 });
    case 'big':
      return { content: [{ type: 'text', text: LARGE }] };
    default:
      return { content: [{ type: 'text', text: `counted ${String(args.n)}` }], structuredContent: { n: args.n } };
  }
}

/** Calling MCP tools through the direct call route (chat and runs use the same ToolCaller) (e2e). */
describe('MCP servers as sites: calls (e2e)', () => {
  let world: McpWorld;
  let everything: EverythingPeer;
  let modern: ScriptedPeer;
  let legacy: ScriptedPeer;
  let limited: ScriptedPeer;
  let authed: ScriptedPeer;

  beforeAll(async () => {
    world = await McpWorld.create();
    everything = await world.everything();
    modern = await world.scripted({ era: 'modern', tools: TOOLS, call: answer });
    legacy = await world.scripted({ era: 'legacy', tools: TOOLS, call: answer });
    limited = await world.scripted({ era: 'modern', tools: TOOLS, call: answer });
    authed = await world.scripted({ era: 'legacy', tools: TOOLS, call: answer, token: 'pasted-token' });
    await world.start({ OUTGOING_CALLS_PER_MINUTE: '8', OUTGOING_CALLS_PER_MINUTE_PER_USER: '8' });
  });

  afterAll(async () => {
    await world?.stop();
  });

  async function added(user: TestUser, url: string): Promise<string> {
    const site = await world.http.post('/api/vault/sites', { url }, { token: user.token });
    expect(site.status).toBe(201);
    return site.body.id as string;
  }

  const call = (user: TestUser, id: string, tool: string, input: Record<string, unknown> = {}) =>
    world.http.post(`/api/vault/sites/${id}/tools/${tool}/call`, { input }, { token: user.token });

  it('calls server-everything: text, image, resource links, embedded resources and structured content', async () => {
    const user = await world.user();
    const id = await added(user, everything.url);
    const echo = await call(user, id, 'echo', { message: 'hello' });
    expect(echo.status).toBe(200);
    expect(echo.body.result).toEqual({ content: [{ type: 'text', text: 'Echo: hello' }] });
    const image = await call(user, id, 'get-tiny-image');
    expect(image.status).toBe(200);
    expect(image.body.result.content).toContainEqual(
      expect.objectContaining({ type: 'image', mimeType: 'image/png', data: expect.any(String) }),
    );
    const links = await call(user, id, 'get-resource-links', { count: 2 });
    expect(links.status).toBe(200);
    expect(links.body.result.content.filter((c: { type: string }) => c.type === 'resource_link')).toHaveLength(2);
    const embedded = await call(user, id, 'get-resource-reference', { resourceType: 'Text', resourceId: 1 });
    expect(embedded.status).toBe(200);
    expect(embedded.body.result.content).toContainEqual(
      expect.objectContaining({ type: 'resource', resource: expect.objectContaining({ uri: expect.any(String) }) }),
    );
    const structured = await call(user, id, 'get-structured-content', { location: 'New York' });
    expect(structured.status).toBe(200);
    expect(structured.body.result.structuredContent).toEqual(
      expect.objectContaining({ temperature: expect.any(Number) }),
    );
  });

  it("checks input against the tool's JSON Schema before anything is sent", async () => {
    const user = await world.user();
    const id = await added(user, modern.url);
    const before = modern.calls().length;
    const bad = await call(user, id, 'count', { n: 0 });
    expectError(bad, 'VALIDATION_ERROR', 400);
    expect(bad.body.details).toEqual([{ field: 'input.n', message: 'must be >= 1' }]);
    expectError(await call(user, id, 'count', {}), 'VALIDATION_ERROR', 400);
    expect(modern.calls().length).toBe(before);
    const good = await call(user, id, 'count', { n: 3 });
    expect(good.body.result).toEqual({ content: [{ type: 'text', text: 'counted 3' }], structuredContent: { n: 3 } });
  });

  it('runs a slow tool that reports progress to its end', async () => {
    const user = await world.user();
    const id = await added(user, everything.url);
    const slow = await call(user, id, 'trigger-long-running-operation', { duration: 2, steps: 4 });
    expect(slow.status).toBe(200);
    expect(slow.body.result.content[0].text).toContain('Long running operation completed');
  });

  it("answers TOOL_EXECUTION_ERROR with the server's text for an isError result and a JSON-RPC error", async () => {
    const user = await world.user();
    const id = await added(user, modern.url);
    const failed = await call(user, id, 'fail');
    expectError(failed, 'TOOL_EXECUTION_ERROR', 502);
    expect(failed.body.error).toContain('the disk is full');
    const refused = await call(user, id, 'refuse');
    expectError(refused, 'TOOL_EXECUTION_ERROR', 502);
    expect(refused.body.error).toContain('count must be below 10');
  });

  it('returns a large result whole', async () => {
    const user = await world.user();
    const id = await added(user, modern.url);
    const big = await call(user, id, 'big');
    expect(big.status).toBe(200);
    expect(big.body.result.content[0].text).toBe(LARGE);
  });

  it("answers the server's 429 as OUTGOING_RATE_LIMITED with its Retry-After", async () => {
    const user = await world.user();
    const id = await added(user, modern.url);
    modern.failNext = { status: 429, headers: { 'retry-after': '7' } };
    const limitedAnswer = await call(user, id, 'count', { n: 1 });
    expectError(limitedAnswer, 'OUTGOING_RATE_LIMITED', 429);
    expect(limitedAnswer.headers.get('retry-after')).toBe('7');
    expect((await call(user, id, 'count', { n: 2 })).status).toBe(200);
  });

  it('speaks 2025-06-18 with a session to a legacy server, and opens a forgotten session again once', async () => {
    const user = await world.user();
    const id = await added(user, legacy.url);
    legacy.seen.length = 0;
    expect((await call(user, id, 'count', { n: 1 })).status).toBe(200);
    expect((await call(user, id, 'count', { n: 2 })).status).toBe(200);
    const calls = legacy.calls();
    expect(calls.map((c) => c.protocolVersion)).toEqual(['2025-06-18', '2025-06-18']);
    expect(calls[0]!.session).toBeDefined();
    expect(calls[1]!.session).toBe(calls[0]!.session);
    expect(legacy.seen.filter((s) => s.rpc === 'initialize')).toHaveLength(1);
    expect(legacy.seen.some((s) => s.rpc === 'server/discover')).toBe(false); // known legacy: no probe

    legacy.forgetSessions();
    const again = await call(user, id, 'count', { n: 3 });
    expect(again.status).toBe(200);
    expect(again.body.result.content[0].text).toBe('counted 3');
    const after = legacy.calls();
    expect(after).toHaveLength(4); // the call with the forgotten session (404), then once on a new one
    expect(after[2]!.session).toBe(calls[0]!.session);
    expect(after[3]!.session).not.toBe(calls[0]!.session);
    expect(legacy.seen.filter((s) => s.rpc === 'initialize')).toHaveLength(2);
  });

  it('counts MCP calls in the outgoing limit of their domain, across vaults', async () => {
    const first = await world.user();
    const second = await world.user();
    const one = await added(first, limited.url);
    const two = await added(second, limited.url);
    for (let i = 1; i <= 5; i += 1) {
      expect((await call(first, one, 'count', { n: i })).status).toBe(200);
    }
    for (let i = 1; i <= 3; i += 1) {
      expect((await call(second, two, 'count', { n: i })).status).toBe(200);
    }
    expectError(await call(second, two, 'count', { n: 4 }), 'OUTGOING_RATE_LIMITED', 429);
    expectError(await call(first, one, 'count', { n: 6 }), 'OUTGOING_RATE_LIMITED', 429);
    expect(limited.calls()).toHaveLength(8);
  });

  it('sends the pasted token; a 401 is TOOL_EXECUTION_ERROR, a 403 insufficient_scope stores the scope to ask for', async () => {
    const user = await world.user();
    const id = await added(user, authed.url);
    await world.http.post(`/api/vault/sites/${id}/token`, { token: 'pasted-token' }, { token: user.token });
    expect((await call(user, id, 'count', { n: 1 })).status).toBe(200);
    expect(authed.calls().at(-1)!.authorization).toBe('Bearer pasted-token');

    authed.failNext = {
      status: 403,
      headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="tools:admin"' },
    };
    const forbidden = await call(user, id, 'count', { n: 2 });
    expectError(forbidden, 'TOOL_EXECUTION_ERROR', 502);
    expect(forbidden.body.error).toContain('needs the scope "tools:admin"');
    const site = await world.http.get(`/api/vault/sites/${id}`, { token: user.token });
    expect(site.body.credential).toMatchObject({ kind: 'bearer', requiredScope: 'tools:admin' });

    authed.options.token = 'rotated-at-the-server';
    const refused = await call(user, id, 'count', { n: 3 });
    expectError(refused, 'TOOL_EXECUTION_ERROR', 502);
    expect(refused.body.error).toContain('refused the credential (401)');
  });
});
