import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { issueServerCert } from '../../examples/site/tls.js';
import { CountingPeer } from '../fixtures/mcp/counting-peer.js';
import { callerHeaders, legacyClient, modernClient, rawPost } from '../fixtures/mcp-server/clients.js';
import type { Http } from '../utils/http.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

const NOTE_TOOL = 'reference_notebook__create_note';
const SEARCH_TOOL = 'reference_notebook__search_notes';
const EVENT_TOOL = 'event_log__events_record';

/** agentsite's own MCP endpoint, /mcp, with the SDKs' clients and raw requests (e2e). */
describe('the MCP endpoint /mcp (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let http: Http;
  let admin: TestUser;
  let peer: CountingPeer;
  let mcpUrl: string;

  beforeAll(async () => {
    world = await startWorld({
      env: {
        MCP_ALLOW_API_TOKENS: 'true',
        OUTGOING_CALLS_PER_MINUTE: '1000',
        SITE_ALLOW_PRIVATE_HOSTS: 'localhost',
      },
    });
    ({ site, http, admin } = world);
    peer = await CountingPeer.start(await issueServerCert(world.sites.ca));
    mcpUrl = `${world.stack.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await peer?.stop();
    await world?.stop();
  });

  /** A user (tier harness) with the reference site (a bearer token) and the counting MCP server in the vault. */
  async function userWithSites(workspaceId?: string, token?: string): Promise<{ user: TestUser }> {
    const user = token === undefined ? await registerUser(http) : ({ token } as TestUser);
    if (token === undefined) {
      await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    }
    const headers = workspaceId !== undefined ? { 'x-workspace-id': workspaceId } : undefined;
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token, headers });
    expect(added.status).toBe(201);
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token, headers },
    );
    const mcp = await http.post('/api/vault/sites', { url: peer.url }, { token: user.token, headers });
    expect(mcp.status).toBe(201);
    return { user };
  }

  describe('site tools', () => {
    let user: TestUser;

    beforeAll(async () => {
      ({ user } = await userWithSites());
    });

    it('lists the vault’s site and MCP tools to a 2026-07-28 client and calls both', async () => {
      const client = await modernClient(mcpUrl, callerHeaders(user.token));
      try {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining([NOTE_TOOL, SEARCH_TOOL, EVENT_TOOL]));
        expect(new Set(names).size).toBe(names.length);
        const search = tools.find((t) => t.name === SEARCH_TOOL)!;
        expect(search).toMatchObject({
          title: 'search_notes (Reference Notebook)',
          inputSchema: { type: 'object', required: ['query'] },
          annotations: { readOnlyHint: true, destructiveHint: false },
        });
        expect(tools.find((t) => t.name === 'reference_notebook__delete_note')?.annotations).toMatchObject({
          readOnlyHint: false,
          destructiveHint: true,
        });
        expect(tools.find((t) => t.name === EVENT_TOOL)).toMatchObject({
          title: 'Record an event (Event log)',
          inputSchema: { properties: { title: { type: 'string', minLength: 1 } }, additionalProperties: false },
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
        });

        const created = await client.callTool({ name: NOTE_TOOL, arguments: { title: 'From an MCP client' } });
        expect(created.isError).not.toBe(true);
        expect(created.structuredContent).toMatchObject({ title: 'From an MCP client' });
        expect(site.notesOf('alice').map((n) => n.title)).toContain('From an MCP client');

        const events = peer.events.length;
        const recorded = await client.callTool({ name: EVENT_TOOL, arguments: { title: 'Via agentsite' } });
        expect(recorded).toMatchObject({
          content: [{ type: 'text', text: `Recorded "Via agentsite" as event #${events + 1}` }],
          structuredContent: { event: events + 1 },
        });
        expect(peer.events.at(-1)?.title).toBe('Via agentsite');
      } finally {
        await client.close();
      }
    });

    it('serves a 2025 client (initialize) statelessly: list and call', async () => {
      const client = await legacyClient(mcpUrl, callerHeaders(user.token));
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining([NOTE_TOOL, EVENT_TOOL]));
        const found = await client.callTool({ name: SEARCH_TOOL, arguments: { query: 'MCP client' } });
        expect(found.isError).not.toBe(true);
        expect(JSON.parse((found.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
          results: [expect.objectContaining({ title: 'From an MCP client' })],
        });
      } finally {
        await client.close();
      }
    });

    it('answers bad input as -32602, an unknown tool as -32602, a site’s failure as an isError result', async () => {
      const client = await modernClient(mcpUrl, callerHeaders(user.token));
      try {
        await expect(client.callTool({ name: NOTE_TOOL, arguments: {} })).rejects.toMatchObject({
          code: -32602,
          data: { code: 'VALIDATION_ERROR', statusCode: 400 },
        });
        await expect(client.callTool({ name: 'nobody__nothing', arguments: {} })).rejects.toMatchObject({
          code: -32602,
          data: { code: 'NOT_FOUND', statusCode: 404 },
        });
        const missing = await client.callTool({
          name: 'reference_notebook__get_note',
          arguments: { id: 'no-such-note' },
        });
        expect(missing.isError).toBe(true);
        expect((missing.content as Array<{ text: string }>)[0]!.text).toContain('404');
      } finally {
        await client.close();
      }
    });
  });

  describe('HTTP and JSON-RPC refusals', () => {
    let token: string;

    beforeAll(async () => {
      token = (await registerUser(http)).token;
    });

    it('answers 401 with the resource-metadata challenge without a token or with a bad one', async () => {
      const none = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, {});
      expect(none.status).toBe(401);
      const metadata = `${world.stack.baseUrl}/.well-known/oauth-protected-resource/mcp`;
      expect(none.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata}"`);
      const bad = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, callerHeaders('nonsense'));
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toContain(`resource_metadata="${metadata}", error="invalid_token"`);
    });

    it('answers malformed JSON, invalid requests, unknown methods and bad params with their JSON-RPC codes', async () => {
      const headers = callerHeaders(token);
      const parse = await rawPost(mcpUrl, '{"jsonrpc": "2.0", "id": 1, "method": ', headers, { raw: true });
      expect(parse.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
      const invalid = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 2, method: 42 }, headers);
      expect(invalid.json).toMatchObject({ error: { code: -32600 } });
      const unknown = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 3, method: 'no/such/method' }, headers);
      expect(unknown.json).toMatchObject({ id: 3, error: { code: -32601 } });
      const params = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: {} }, headers);
      expect(params.json).toMatchObject({ id: 4, error: { code: -32602 } });
      const big = await rawPost(
        mcpUrl,
        { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { pad: 'x'.repeat(300 * 1024) } },
        headers,
      );
      expect(big.status).toBe(413);
      for (const method of ['GET', 'DELETE']) {
        const answer = await rawPost(mcpUrl, undefined, headers, { method });
        expect(answer.status).toBe(405);
      }
    });
  });
});
