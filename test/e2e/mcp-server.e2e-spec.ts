import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ReferenceSite } from '../../examples/site/site.js';
import { issueServerCert } from '../../examples/site/tls.js';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { CountingPeer } from '../fixtures/mcp/counting-peer.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { callerHeaders, legacyClient, modernClient, rawPost } from '../fixtures/mcp-server/clients.js';
import type { Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';
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
  let model: FakeModel;
  let mcpUrl: string;

  beforeAll(async () => {
    world = await startWorld({
      env: {
        MCP_ALLOW_API_TOKENS: 'true',
        OUTGOING_CALLS_PER_MINUTE: '1000',
        SITE_ALLOW_PRIVATE_HOSTS: 'localhost',
      },
    });
    ({ site, http, admin, model } = world);
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
      await http.patch(`/api/admin/users/${user.id}`, { tier: 'team', credits: 100_000 }, { token: admin.token });
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

    it('negotiates 2025-06-18 with an initialize client and answers it in that revision', async () => {
      const headers = callerHeaders(user.token);
      const init = await rawPost(
        mcpUrl,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
        },
        headers,
      );
      expect(init.json).toMatchObject({ result: { protocolVersion: '2025-06-18', serverInfo: { name: 'agentsite' } } });
      expect(init.headers.get('mcp-session-id')).toBeNull();
      const list = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
      expect(list.json.result.tools.map((t: { name: string }) => t.name)).toContain(NOTE_TOOL);
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

  describe('agents and runs', () => {
    let user: TestUser;
    let agentId: string;

    beforeAll(async () => {
      ({ user } = await userWithSites());
      const sites = (await http.get('/api/vault/sites', { token: user.token })).body.items as Array<{ id: string }>;
      const agent = await http.post(
        '/api/agents',
        {
          name: 'Note taker',
          systemPrompt: 'You take notes.',
          siteIds: sites.map((s) => s.id),
          trigger: { type: 'manual' },
        },
        { token: user.token },
      );
      expect(agent.status).toBe(201);
      agentId = agent.body.id as string;
    });

    it('runs an agent to its end in wait mode with progress, then reads it with get_run and as a resource', async () => {
      model.script(
        (req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Written by a run' } }] }),
        { text: 'The note is written.' },
      );
      const client = await modernClient(mcpUrl, callerHeaders(user.token));
      try {
        const { tools } = await client.listTools();
        const tool = tools.find((t) => t.name === 'agent__note_taker');
        expect(tool).toMatchObject({ inputSchema: { type: 'object', properties: { input: { type: 'string' } } } });
        expect(tools.map((t) => t.name)).toContain('get_run');
        const progress: Array<{ progress: number; message?: string }> = [];
        const result = await client.callTool(
          { name: 'agent__note_taker', arguments: { input: 'Write the note' } },
          { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
        );
        expect(result.isError).not.toBe(true);
        expect(result.content).toEqual([{ type: 'text', text: 'The note is written.' }]);
        expect(result.structuredContent).toMatchObject({ status: 'completed', output: 'The note is written.' });
        expect(progress.length).toBeGreaterThan(0);
        expect(progress.map((p) => p.message)).toContain('Calling create_note of Reference Notebook');
        const runId = (result.structuredContent as { runId: string }).runId;
        const rest = await http.get(`/api/runs/${runId}`, { token: user.token });
        expect(rest.body).toMatchObject({ agentId, status: 'completed', input: 'Write the note' });

        const read = await client.callTool({ name: 'get_run', arguments: { runId } });
        expect(read.structuredContent).toMatchObject({ id: runId, agentId, status: 'completed' });
        expect((read.structuredContent as { timeline: Array<{ type: string }> }).timeline.map((e) => e.type)).toEqual(
          (rest.body.timeline as Array<{ type: string }>).map((e) => e.type),
        );

        const { resourceTemplates } = await client.listResourceTemplates();
        expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'agentsite://runs/{id}' })]);
        const resource = await client.readResource({ uri: `agentsite://runs/${runId}` });
        expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({
          id: runId,
          status: 'completed',
          timeline: expect.arrayContaining([expect.objectContaining({ type: 'completed' })]),
        });
      } finally {
        await client.close();
      }
    });

    it('runs an agent as a task for a 2025-11-25 client: tasks/get, tasks/result, and tasks/cancel', async () => {
      const client = await legacyClient(mcpUrl, callerHeaders(user.token));
      let release: () => void = () => undefined;
      try {
        const tool = (await client.listTools()).tools.find((t) => t.name === 'agent__note_taker');
        expect(tool?.execution).toEqual({ taskSupport: 'optional' });
        model.script({ text: 'Done as a task.' });
        const created = await client.request(
          {
            method: 'tools/call',
            params: { name: 'agent__note_taker', arguments: { input: 'As a task' }, task: { ttl: 60_000 } },
          },
          CreateTaskResultSchema,
        );
        expect(created.task).toMatchObject({ status: 'working', ttl: null });
        const taskId = created.task.taskId;
        const rest = await http.get(`/api/runs/${taskId}`, { token: user.token });
        expect(rest.body).toMatchObject({ agentId, input: 'As a task' });
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(result.content).toEqual([{ type: 'text', text: 'Done as a task.' }]);
        expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });

        // A run held at its model turn, cancelled as a task.
        const gate = new Promise<void>((resolve) => (release = resolve));
        model.script({ gate, text: 'Never seen.' });
        const held = await client.request(
          { method: 'tools/call', params: { name: 'agent__note_taker', arguments: {}, task: { ttl: 60_000 } } },
          CreateTaskResultSchema,
        );
        const cancelled = await client.experimental.tasks.cancelTask(held.task.taskId);
        expect(cancelled).toMatchObject({ taskId: held.task.taskId, status: 'cancelled' });
        expect((await http.get(`/api/runs/${held.task.taskId}`, { token: user.token })).body.status).toBe('cancelled');
        await expect(client.experimental.tasks.cancelTask(held.task.taskId)).rejects.toMatchObject({ code: -32602 });
      } finally {
        release();
        await client.close();
      }
    });

    it('gives a webhook agent its schema’s fields as input and queues a webhook run with them', async () => {
      const agent = await http.post(
        '/api/agents',
        {
          name: 'Triage',
          systemPrompt: 'Triage tickets.',
          siteIds: [],
          trigger: {
            type: 'webhook',
            schema: [
              { name: 'ticket', type: 'string', required: true },
              { name: 'priority', type: 'integer' },
            ],
          },
        },
        { token: user.token },
      );
      expect(agent.status).toBe(201);
      const client = await modernClient(mcpUrl, callerHeaders(user.token));
      try {
        const tool = (await client.listTools()).tools.find((t) => t.name === 'agent__triage');
        expect(tool?.inputSchema).toMatchObject({
          type: 'object',
          properties: { ticket: { type: 'string' }, priority: { type: 'integer' } },
          required: ['ticket'],
        });
        await expect(client.callTool({ name: 'agent__triage', arguments: { priority: 1 } })).rejects.toMatchObject({
          code: -32602,
          data: { code: 'WEBHOOK_PAYLOAD_INVALID', statusCode: 422 },
        });
        model.script({ text: 'Triaged.' });
        const done = await client.callTool({ name: 'agent__triage', arguments: { ticket: 'T-1', priority: 2 } });
        expect(done.structuredContent).toMatchObject({ status: 'completed', output: 'Triaged.' });
        const runId = (done.structuredContent as { runId: string }).runId;
        const run = await http.get(`/api/runs/${runId}`, { token: user.token });
        expect(run.body).toMatchObject({ triggeredBy: 'webhook', payload: { ticket: 'T-1', priority: 2 } });
      } finally {
        await client.close();
      }
    });

    it('refuses an agent call without credits as REST does (NO_CREDITS), starting no run', async () => {
      const { user: broke } = await userWithSites();
      const agent = await http.post(
        '/api/agents',
        { name: 'Broke', systemPrompt: 'You answer.', siteIds: [], trigger: { type: 'manual' } },
        { token: broke.token },
      );
      expect(agent.status).toBe(201);
      await http.patch(`/api/admin/users/${broke.id}`, { credits: 0 }, { token: admin.token });
      const client = await modernClient(mcpUrl, callerHeaders(broke.token));
      try {
        await expect(client.callTool({ name: 'agent__broke', arguments: {} })).rejects.toMatchObject({
          code: -32000,
          data: { code: 'NO_CREDITS', statusCode: 402 },
        });
        const runs = await http.get(`/api/agents/${agent.body.id}/runs`, { token: broke.token });
        expect(runs.body.items).toEqual([]);
      } finally {
        await client.close();
      }
    });

    it('scope-checks runs: another user’s run is not found by get_run nor as a resource', async () => {
      model.script({ text: 'Done.' });
      const client = await modernClient(mcpUrl, callerHeaders(user.token));
      const other = await registerUser(http);
      const stranger = await modernClient(mcpUrl, callerHeaders(other.token));
      try {
        const done = await client.callTool({ name: 'agent__note_taker', arguments: {} });
        const runId = (done.structuredContent as { runId: string }).runId;
        await expect(stranger.callTool({ name: 'get_run', arguments: { runId } })).rejects.toMatchObject({
          code: -32602,
          data: { code: 'RUN_NOT_FOUND', statusCode: 404 },
        });
        await expect(stranger.readResource({ uri: `agentsite://runs/${runId}` })).rejects.toMatchObject({
          data: { code: 'RUN_NOT_FOUND' },
        });
      } finally {
        await client.close();
        await stranger.close();
      }
    });
  });

  describe('workspaces: roles and isolation', () => {
    let owner: TestUser;
    let viewer: TestUser;
    let workspaceId: string;

    beforeAll(async () => {
      owner = await registerUser(http);
      await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team', credits: 100_000 }, { token: admin.token });
      workspaceId = (await http.post('/api/workspaces', { name: 'MCP' }, { token: owner.token })).body.id as string;
      await userWithSites(workspaceId, owner.token);
      const headers = { 'x-workspace-id': workspaceId };
      const sites = (await http.get('/api/vault/sites', { token: owner.token, headers })).body.items as Array<{
        id: string;
      }>;
      const agent = await http.post(
        '/api/agents',
        { name: 'Shared', systemPrompt: 'You help.', siteIds: sites.map((s) => s.id), trigger: { type: 'manual' } },
        { token: owner.token, headers },
      );
      expect(agent.status).toBe(201);
      viewer = await registerUser(http);
      await joinWorkspace(http, workspaceId, owner.token, viewer, 'viewer');
    });

    it('a viewer lists the workspace’s tools and agents, calls read tools, and is refused the rest', async () => {
      const client = await modernClient(mcpUrl, callerHeaders(viewer.token, workspaceId));
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(['agent__shared', NOTE_TOOL, SEARCH_TOOL, EVENT_TOOL]));
        const found = await client.callTool({ name: SEARCH_TOOL, arguments: { query: 'anything' } });
        expect(found.isError).not.toBe(true);
        for (const name of [NOTE_TOOL, 'reference_notebook__delete_note', 'reference_notebook__manage_users']) {
          await expect(client.callTool({ name, arguments: { title: 'x', id: 'x' } })).rejects.toMatchObject({
            data: { code: 'PERMISSION_DENIED', statusCode: 403 },
          });
        }
        const runs = model.requests.length;
        await expect(client.callTool({ name: 'agent__shared', arguments: { input: 'go' } })).rejects.toMatchObject({
          data: { code: 'PERMISSION_DENIED', statusCode: 403 },
        });
        expect(model.requests.length).toBe(runs);
      } finally {
        await client.close();
      }
    });

    it('a token acts in its own scope only: no workspace tools in the personal scope, none for a non-member', async () => {
      const personal = await modernClient(mcpUrl, callerHeaders(owner.token));
      try {
        const names = (await personal.listTools()).tools.map((t) => t.name);
        expect(names).not.toContain('agent__shared');
        expect(names).not.toContain(NOTE_TOOL);
      } finally {
        await personal.close();
      }
      const outsider = await registerUser(http);
      const refused = await rawPost(
        mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        callerHeaders(outsider.token, workspaceId),
      );
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });
  });

  describe('two API processes', () => {
    let second: Stack;
    let strict: Stack;

    beforeAll(async () => {
      // The same service beside the first: same database, Temporal task queue and worker. This one
      // waits for no run (MCP_RUN_WAIT_SECONDS=0) and has a small per-user limit of its own.
      const { PORT: _p, PUBLIC_BASE_URL: _u, DATA_DIR: _d, TEMPORAL_TASK_QUEUE: queue, ...env } = world.stack.env;
      second = await Stack.start({
        worker: false,
        taskQueue: queue,
        env: { ...(env as Record<string, string>), MCP_RUN_WAIT_SECONDS: '0', RATE_LIMIT_PER_USER: '6' },
      });
      strict = await Stack.start({
        worker: false,
        taskQueue: queue,
        env: { ...(env as Record<string, string>), MCP_ALLOW_API_TOKENS: 'false' },
      });
    });

    afterAll(async () => {
      await second?.stop();
      await strict?.stop();
    });

    it('serves one client whose requests go alternately to both processes (stateless)', async () => {
      const { user } = await userWithSites();
      const bases = [world.stack.baseUrl, second.baseUrl];
      const served: string[] = [];
      let next = 0;
      const alternating: typeof fetch = (input, init) => {
        const base = bases[next++ % 2]!;
        served.push(base);
        const url = new URL(input instanceof Request ? input.url : String(input));
        return fetch(`${base}${url.pathname}${url.search}`, init);
      };
      const client = new Client({ name: 'alternating', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl), {
          fetch: alternating,
          requestInit: { headers: callerHeaders(user.token) },
        }),
      );
      try {
        for (let i = 0; i < 2; i += 1) {
          expect((await client.listTools()).tools.map((t) => t.name)).toContain(NOTE_TOOL);
          const created = await client.callTool({ name: NOTE_TOOL, arguments: { title: `Alternately ${i}` } });
          expect(created.structuredContent).toMatchObject({ title: `Alternately ${i}` });
        }
      } finally {
        await client.close();
      }
      expect(new Set(served)).toEqual(new Set(bases));
    });

    it('answers an agent call with {runId, status} when the run outlasts MCP_RUN_WAIT_SECONDS; get_run reads it later', async () => {
      const { user } = await userWithSites();
      const agent = await http.post(
        '/api/agents',
        { name: 'Quick', systemPrompt: 'You answer.', siteIds: [], trigger: { type: 'manual' } },
        { token: user.token },
      );
      expect(agent.status).toBe(201);
      // The model answers only once the call has answered: the run is still going when the endpoint looks.
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      model.script({ text: 'Answered later.', gate });
      const client = await modernClient(`${second.baseUrl}/mcp`, callerHeaders(user.token));
      try {
        const started = await client.callTool({ name: 'agent__quick', arguments: { input: 'hi' } });
        release();
        expect(started.isError).not.toBe(true);
        const { runId, status } = started.structuredContent as { runId: string; status: string };
        expect(['queued', 'active']).toContain(status);
        expect((started.content as Array<{ text: string }>)[0]!.text).toContain('get_run');
        await waitForRun(http, user.token, runId);
        const read = await client.callTool({ name: 'get_run', arguments: { runId } });
        expect(read.structuredContent).toMatchObject({ id: runId, status: 'completed' });
      } finally {
        release();
        await client.close();
      }
    });

    it('counts /mcp requests against the per-user limit of the API (RATE_LIMITED)', async () => {
      const user = await registerUser(http);
      const list = () =>
        rawPost(`${second.baseUrl}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, callerHeaders(user.token));
      const answers = [];
      for (let i = 0; i < 7; i += 1) {
        answers.push(await list());
      }
      expect(answers.slice(0, 6).map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(answers[6]).toMatchObject({ status: 429, json: { code: 'RATE_LIMITED', statusCode: 429 } });
      expect(Number(answers[6]!.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('refuses API tokens with 401 when MCP_ALLOW_API_TOKENS is off', async () => {
      const user = await registerUser(http);
      const refused = await rawPost(
        `${strict.baseUrl}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        callerHeaders(user.token),
      );
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${strict.baseUrl}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="This token is not valid here"`,
      );
      const allowed = await rawPost(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, callerHeaders(user.token));
      expect(allowed.status).toBe(200);
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

    it('serves an API token again without verifying its signature, and still refuses it once logged out', async () => {
      const user = await registerUser(http);
      const list = () => rawPost(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, callerHeaders(user.token));
      // The second request takes the signature this process remembered; the token's revocation is read every time.
      expect((await list()).status).toBe(200);
      expect((await list()).status).toBe(200);
      expect((await http.post('/api/auth/logout', undefined, { token: user.token })).status).toBe(204);
      const refused = await list();
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(refused.json).toMatchObject({ code: 'INVALID_TOKEN' });
      // A token that is not one (its signature forged) is refused as before, remembered or not.
      const forged = `${user.token.slice(0, user.token.lastIndexOf('.') + 1)}${'A'.repeat(43)}`;
      expect(
        (await rawPost(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, callerHeaders(forged))).status,
      ).toBe(401);
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
