import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import type { EverythingPeer } from '../fixtures/mcp/everything-peer.js';
import { McpWorld, type PlainServer } from '../fixtures/mcp/mcp-world.js';
import type { ScriptedPeer } from '../fixtures/mcp/scripted-peer.js';
import { expectError } from '../utils/http.js';
import type { TestUser } from '../utils/users.js';

const TOOLS = [
  {
    name: 'search_files',
    title: 'Search files',
    description: 'Finds files by name',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'delete_file',
    description: 'Deletes a file',
    inputSchema: { type: 'object' },
    annotations: { destructiveHint: true },
  },
];

/** Adding MCP servers to the vault: detection, the tool-list rules, needs_connection, SSRF (e2e). */
describe('MCP servers as sites: adding (e2e)', () => {
  let world: McpWorld;
  let everything: EverythingPeer;
  let modern: ScriptedPeer;
  let legacy: ScriptedPeer;
  let authed: ScriptedPeer;
  let duplicates: ScriptedPeer;
  let notObject: ScriptedPeer;
  let tooMany: ScriptedPeer;
  let privateMetadata: ScriptedPeer;
  let privateIssuer: ScriptedPeer;
  let redirector: PlainServer;
  let nothing: PlainServer;
  let reference: ReferenceSite;

  beforeAll(async () => {
    world = await McpWorld.create();
    everything = await world.everything();
    modern = await world.scripted({ era: 'modern', tools: [...TOOLS] });
    legacy = await world.scripted({ era: 'legacy', tools: TOOLS });
    authed = await world.scripted({ era: 'modern', tools: TOOLS, token: 'pasted-token' });
    duplicates = await world.scripted({ era: 'legacy', tools: [TOOLS[0], TOOLS[1], TOOLS[0]] });
    notObject = await world.scripted({ era: 'legacy', tools: [{ name: 'list', inputSchema: { type: 'array' } }] });
    tooMany = await world.scripted({
      era: 'legacy',
      tools: Array.from({ length: 201 }, (_, i) => ({ name: `tool_${i}`, inputSchema: { type: 'object' } })),
    });
    privateMetadata = await world.scripted({
      era: 'modern',
      tools: TOOLS,
      token: 't',
      resourceMetadataUrl: 'https://10.0.0.7/.well-known/oauth-protected-resource',
    });
    privateIssuer = await world.scripted({
      era: 'modern',
      tools: TOOLS,
      token: 't',
      authorizationServer: 'https://192.168.0.9',
    });
    redirector = await world.plain(() => ({ status: 307, headers: { location: 'https://127.0.0.1:9/mcp' } }));
    nothing = await world.plain(() => ({ status: 404, body: '{"error":"no such page"}' }));
    reference = await world.reference();
    await world.start();
  });

  afterAll(async () => {
    await world?.stop();
  });

  const add = (user: TestUser, body: Record<string, unknown>) =>
    world.http.post('/api/vault/sites', body, { token: user.token });

  it('adds server-everything by its URL alone: protocol detected, tools with titles, annotations and scopes', async () => {
    const user = await world.user();
    const added = await add(user, { url: everything.url });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      url: everything.url,
      protocol: 'mcp',
      status: 'ready',
      name: 'Everything Reference Server',
      serverUrl: everything.url,
      auth: { type: 'bearer' },
      credential: { kind: null },
    });
    const echo = (added.body.tools as Array<Record<string, unknown>>).find((t) => t.name === 'echo');
    expect(echo).toMatchObject({
      title: 'Echo Tool',
      description: 'Echoes back the input string',
      scope: 'read',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    });
    expect((await world.http.get(`/api/vault/sites/${added.body.id}`, { token: user.token })).body).toMatchObject({
      protocol: 'mcp',
      status: 'ready',
    });
  });

  it('adds a 2026-07-28 server and a 2025-06-18 one with protocol "mcp"; scopes come from the annotations', async () => {
    const user = await world.user();
    const fresh = await add(user, { url: modern.url, protocol: 'mcp' });
    expect(fresh.status).toBe(201);
    expect(fresh.body).toMatchObject({ name: 'Modern peer', version: '2.0.0', description: 'A scripted MCP server.' });
    expect(fresh.body.tools).toEqual([
      {
        name: 'search_files',
        title: 'Search files',
        description: 'Finds files by name',
        scope: 'read',
        annotations: { readOnlyHint: true },
        inputSchema: TOOLS[0]!.inputSchema,
      },
      {
        name: 'delete_file',
        description: 'Deletes a file',
        scope: 'delete',
        annotations: { destructiveHint: true },
        inputSchema: { type: 'object', properties: {} },
      },
    ]);
    expect(modern.seen.some((s) => s.rpc === 'server/discover' && s.protocolVersion === '2026-07-28')).toBe(true);
    const old = await add(user, { url: legacy.url, protocol: 'mcp' });
    expect(old.status).toBe(201);
    expect(old.body).toMatchObject({ name: 'legacy-peer', status: 'ready' });
    expect(legacy.seen.some((s) => s.rpc === 'tools/list' && s.protocolVersion === '2025-06-18')).toBe(true);
  });

  it('keeps agentsite sites as they were: detected first, protocol agentsite, always ready', async () => {
    const user = await world.user();
    const added = await add(user, { url: reference.url });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ protocol: 'agentsite', status: 'ready' });
    expectError(await add(user, { url: everything.url, protocol: 'agentsite' }), 'MANIFEST_NOT_FOUND', 404);
  });

  it('refuses a protocol it does not know, and null', async () => {
    const user = await world.user();
    expectError(await add(user, { url: everything.url, protocol: 'smtp' }), 'VALIDATION_ERROR', 400);
    expectError(await add(user, { url: everything.url, protocol: null }), 'VALIDATION_ERROR', 400);
  });

  it('answers INVALID_URL for http://, a private address and a redirect to one', async () => {
    const user = await world.user();
    expectError(await add(user, { url: everything.url.replace('https:', 'http:') }), 'INVALID_URL', 400);
    expectError(await add(user, { url: 'https://10.1.2.3/mcp', protocol: 'mcp' }), 'INVALID_URL', 400);
    expectError(await add(user, { url: `${redirector.url}/mcp`, protocol: 'mcp' }), 'INVALID_URL', 400);
    expectError(await add(user, { url: `${redirector.url}/mcp` }), 'INVALID_URL', 400);
  });

  it('answers MANIFEST_NOT_FOUND when nothing at the URL speaks either protocol', async () => {
    const user = await world.user();
    const answer = await add(user, { url: `${nothing.url}/mcp` });
    expectError(answer, 'MANIFEST_NOT_FOUND', 404);
    expect(answer.body.error).toContain('does not speak MCP');
    expectError(await add(user, { url: `${nothing.url}/mcp`, protocol: 'mcp' }), 'MANIFEST_NOT_FOUND', 404);
  });

  it('answers MANIFEST_INVALID with details for duplicate names, a non-object schema and too many tools', async () => {
    const user = await world.user();
    const dup = await add(user, { url: duplicates.url });
    expectError(dup, 'MANIFEST_INVALID', 422);
    expect(dup.body.details).toEqual([{ field: 'tools[2].name', message: 'duplicates the tool name "search_files"' }]);
    const schema = await add(user, { url: notObject.url });
    expectError(schema, 'MANIFEST_INVALID', 422);
    expect(schema.body.details).toEqual([
      { field: 'tools[0].inputSchema.type', message: 'must be "object" (an object schema)' },
    ]);
    const many = await add(user, { url: tooMany.url });
    expectError(many, 'MANIFEST_INVALID', 422);
    expect(many.body.details).toEqual([
      { field: 'tools', message: 'must list at most 200 tools (the server lists 201)' },
    ]);
    expect((await world.http.get('/api/vault/sites', { token: user.token })).body.items).toEqual([]);
  });

  it('stores a server that asks for authorization as needs_connection, ready once a pasted token works', async () => {
    const user = await world.user();
    const added = await add(user, { url: authed.url });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      protocol: 'mcp',
      status: 'needs_connection',
      tools: [],
      auth: { type: 'oauth2', scopes: ['tools:read', 'tools:write'] },
    });
    const id = added.body.id as string;
    const early = await world.http.post(
      `/api/vault/sites/${id}/tools/search_files/call`,
      { input: { query: 'a' } },
      { token: user.token },
    );
    expectError(early, 'TOOL_EXECUTION_ERROR', 502);
    expect(early.body.error).toContain('is not connected');
    const wrong = await world.http.post(`/api/vault/sites/${id}/token`, { token: 'not-it' }, { token: user.token });
    expect(wrong.status).toBe(201);
    expect((await world.http.get(`/api/vault/sites/${id}`, { token: user.token })).body.status).toBe(
      'needs_connection',
    );
    const right = await world.http.patch(
      `/api/vault/sites/${id}/token`,
      { token: 'pasted-token' },
      { token: user.token },
    );
    expect(right.status).toBe(200);
    const site = (await world.http.get(`/api/vault/sites/${id}`, { token: user.token })).body;
    expect(site).toMatchObject({ status: 'ready', credential: { kind: 'bearer', requiredScope: null } });
    expect((site.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['search_files', 'delete_file']);
    const refreshed = await world.http.post(`/api/vault/sites/${id}/manifest/refresh`, {}, { token: user.token });
    expect(refreshed.body).toMatchObject({ status: 'ready', credential: { kind: 'bearer' } });
    expect(authed.seen.at(-1)).toMatchObject({ rpc: 'tools/list', authorization: 'Bearer pasted-token' });
  });

  it('answers INVALID_URL when the metadata document or the authorization server is at a private address', async () => {
    const user = await world.user();
    expectError(await add(user, { url: privateMetadata.url }), 'INVALID_URL', 400);
    expectError(await add(user, { url: privateIssuer.url }), 'INVALID_URL', 400);
  });

  it('lists the tools again on refresh', async () => {
    const user = await world.user();
    const added = await add(user, { url: modern.url });
    expect(added.body.tools).toHaveLength(2);
    modern.options.tools.push({ name: 'rename_file', inputSchema: { type: 'object' } });
    const refreshed = await world.http.post(
      `/api/vault/sites/${added.body.id}/manifest/refresh`,
      {},
      { token: user.token },
    );
    expect(refreshed.status).toBe(200);
    expect((refreshed.body.tools as Array<{ name: string; scope: string }>).map((t) => [t.name, t.scope])).toEqual([
      ['search_files', 'read'],
      ['delete_file', 'delete'],
      ['rename_file', 'write'],
    ]);
    modern.options.tools.pop();
  });
});
