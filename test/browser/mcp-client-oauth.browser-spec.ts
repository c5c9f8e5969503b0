/**
 * A third-party MCP client, the official v2 SDK's (`@modelcontextprotocol/client`: `Client`, its
 * `StreamableHTTPClientTransport` with an `authProvider`), given only `{base}/mcp`: the SDK discovers
 * the authorization server from the endpoint's 401 (protected-resource metadata, then the
 * authorization server's metadata), registers itself (dynamic registration, a loopback redirect
 * URI), and builds the authorization URL (PKCE S256, the resource); Chromium opens it, the user signs
 * in and approves on the console's consent page; the SDK exchanges the code (`finishAuth`), lists and
 * calls tools, refreshes. Behind a round-robin balancer over two API processes the whole way, as a
 * stateless endpoint and an authorization server with its state in PostgreSQL must allow.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { freePort, stopChild, waitFor } from '../../scripts/runtime/processes.js';
import { legacyClient } from '../fixtures/mcp-server/clients.js';
import { type Balancer, roundRobin } from '../fixtures/mcp-client/balancer.js';
import { MemoryOAuthClient } from '../fixtures/mcp-client/oauth-provider.js';
import { eventually } from '../utils/runs.js';
import type { ProcessHandle } from '../utils/stack.js';
import { signIn, signUp, startConsoleWorld, tokenOf, type ConsoleUser, type ConsoleWorld } from './harness.js';
import { approveInPage, startLoopbackApp, waitForConsent, type LoopbackApp } from './steps/mcp-connect.js';

const INFO = { name: 'proof-client', version: '1.0.0' };
/** A list asked of the server, not answered from the SDK's cache (the endpoint's lists carry cache hints). */
const FRESH = { cacheMode: 'bypass' } as const;

interface Setup {
  user: ConsoleUser;
  token: string;
  /** The team workspace (B), with nothing of the personal account's (A). */
  team: string;
}

describe('the official SDK client connects to /mcp from only the URL (browser)', () => {
  let w: ConsoleWorld;
  let second: ProcessHandle;
  let origins: string[];
  let app: LoopbackApp;
  let endpoint: URL;
  let setup: Setup;
  /** The personal account's access token and agent tool, from the first test's consent. */
  let personal: { accessToken: string; agentTool: string } | undefined;

  beforeAll(async () => {
    w = await startConsoleWorld();
    // A second API process on the same database and Temporal (test/utils/cluster.ts does the same).
    const port = await freePort();
    second = w.stack.spawn('api-2', 'src/main.js', { PORT: String(port) });
    origins = [w.stack.baseUrl, `http://127.0.0.1:${port}`];
    await waitFor(
      'the second API process',
      async () => (await fetch(`${origins[1]}/api/health`).catch(() => undefined))?.status === 200,
      90_000,
      150,
    );
    app = await startLoopbackApp();
    endpoint = new URL('/mcp', w.stack.baseUrl);
    setup = await userWithTwoWorkspaces();
  }, 180_000);

  afterAll(async () => {
    await app?.stop();
    if (second !== undefined) {
      await stopChild(second.child);
    }
    await w?.stop();
  });

  /**
   * A Team user whose personal account (A) has the reference site connected and an agent, and who
   * owns a team workspace (B) with an agent of its own.
   */
  async function userWithTwoWorkspaces(): Promise<Setup> {
    const page = await w.newPage();
    const user = await signUp(page);
    const token = await tokenOf(page);
    await page.close();
    const me = await w.http.get<{ id: string }>('/api/me', { token });
    const patched = await w.http.patch(
      `/api/admin/users/${me.body.id}`,
      { tier: 'team', credits: 1_000_000 },
      { token: w.admin.token },
    );
    expect(patched.status).toBe(200);
    const added = await w.http.post<{ id: string }>('/api/vault/sites', { url: w.site.url }, { token });
    expect(added.status).toBe(201);
    const stored = await w.http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: w.site.issueApiToken('alice').token },
      { token },
    );
    expect(stored.status).toBeLessThan(300);
    const alpha = await w.http.post(
      '/api/agents',
      { name: 'Alpha notes', systemPrompt: 'You take notes.', siteIds: [], trigger: { type: 'manual' } },
      { token },
    );
    expect(alpha.status).toBe(201);
    const team = await w.http.post<{ id: string }>('/api/workspaces', { name: 'Beta team' }, { token });
    expect(team.status).toBe(201);
    const agent = await w.http.post(
      '/api/agents',
      { name: 'Beta digest', systemPrompt: 'You digest.', siteIds: [], trigger: { type: 'manual' } },
      { token, headers: { 'x-workspace-id': team.body.id } },
    );
    expect(agent.status).toBe(201);
    return { user, token, team: team.body.id };
  }

  function transport(provider: MemoryOAuthClient, balancer: Balancer): StreamableHTTPClientTransport {
    return new StreamableHTTPClientTransport(endpoint, { authProvider: provider, fetch: balancer.fetch });
  }

  /**
   * What a desktop app does with the SDK: the first request meets the 401, the SDK discovers,
   * registers and asks for the authorization URL to be opened; the user signs in and approves in
   * `page` (a fresh profile) for `workspace`; the app hands the redirect's query to `finishAuth` and
   * connects again, now with a token.
   */
  async function connectThroughConsent(
    page: Page,
    provider: MemoryOAuthClient,
    balancer: Balancer,
    appName: string,
    workspace?: string,
  ): Promise<Client> {
    const asked = provider.authorizationUrls.length;
    const first = transport(provider, balancer);
    const client = new Client(INFO);
    await expect(client.connect(first).then(() => client.listTools())).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = await provider.nextAuthorizationUrl(asked);
    await page.goto(authorizationUrl.href);
    // A fresh browser profile: signed out, the console sends it to sign in and back to the consent page.
    await page.waitForURL(
      (url) => url.pathname === '/signin' && url.searchParams.get('next')?.startsWith('/connect/') === true,
    );
    await signIn(page, setup.user);
    await waitForConsent(page, appName).catch(async (err: unknown) => {
      // Says where the browser ended instead (the page's words), not only that a heading was missing.
      const text = ((await page.locator('body').textContent()) ?? '').replace(/\s+/g, ' ').slice(0, 500);
      throw new Error(`no consent page for ${appName} at ${page.url()}: "${text}" (${String(err)})`);
    });
    const query = await approveInPage(page, app.redirectUri, workspace);
    expect(query.get('error')).toBeNull();
    await first.finishAuth(query);
    await client.close();
    const connected = new Client(INFO);
    await connected.connect(transport(provider, balancer));
    return connected;
  }

  it('discovers, registers, is approved in Chromium, gets a token; lists and calls a site tool of its workspace only, through either API process', async () => {
    const appName = 'Proof Desk';
    const provider = new MemoryOAuthClient(app.redirectUri, appName);
    const balancer = roundRobin(origins);
    const page = await w.newPage();
    const client = await connectThroughConsent(page, provider, balancer, appName);

    // Only the URL was given: the SDK found the rest from the 401.
    const paths = balancer.served.map((s) => `${s.method} ${s.path.split('?')[0]} ${s.status}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST \/mcp 401$/),
        'GET /.well-known/oauth-protected-resource/mcp 200',
        expect.stringMatching(/^GET \/\.well-known\/(oauth-authorization-server|openid-configuration)\/mcp-oauth 200$/),
        expect.stringMatching(/^POST \/mcp-oauth\/\S+ 201$/), // dynamic registration
        expect.stringMatching(/^POST \/mcp-oauth\/token 200$/),
      ]),
    );
    const authorizationUrl = provider.authorizationUrls[0]!;
    expect(authorizationUrl.origin).toBe(w.stack.baseUrl);
    expect(Object.fromEntries(authorizationUrl.searchParams)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      code_challenge: expect.any(String),
      redirect_uri: app.redirectUri,
      resource: endpoint.href,
    });
    expect(provider.tokens()).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });

    // The personal account's tools (workspace A): the site's and its agent, not the team's agent.
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    const search = names.find((n) => n.endsWith('__search_notes'));
    expect(search).toEqual(expect.any(String));
    expect(names.filter((n) => /alpha/i.test(n))).toHaveLength(1);
    expect(names.filter((n) => /beta/i.test(n))).toEqual([]);
    const called = await client.callTool({ name: search!, arguments: { query: 'x' } });
    expect(called.isError).not.toBe(true);
    expect(called.structuredContent).toEqual({ results: expect.any(Array) });

    // The agent as a tool: the call starts a run and answers its output once it ends; the run is a resource.
    w.model.script({ text: 'Alpha took the notes.' });
    const progress: number[] = [];
    const ran = await client.callTool(
      { name: names.find((n) => /alpha/i.test(n))!, arguments: { input: 'Take the notes' } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(ran.isError).not.toBe(true);
    expect(ran.structuredContent).toMatchObject({ status: 'completed', output: 'Alpha took the notes.' });
    const runId = (ran.structuredContent as { runId: string }).runId;
    const resource = await client.readResource({ uri: `agentsite://runs/${runId}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({
      id: runId,
      status: 'completed',
    });
    const onRest = await w.http.get(`/api/runs/${runId}`, { token: setup.token });
    expect(onRest.body).toMatchObject({ status: 'completed', triggeredBy: 'manual' });

    personal = { accessToken: provider.tokens()!.access_token, agentTool: names.find((n) => /alpha/i.test(n))! };

    // The access token is for /mcp only: /api refuses it.
    const onApi = await w.http.get('/api/me', { token: provider.tokens()!.access_token });
    expect(onApi.status).toBe(401);

    // Both processes served tool calls of the one client.
    const before = balancer.served.length;
    for (let i = 0; i < 4; i += 1) {
      const again = await client.callTool({ name: search!, arguments: { query: `x${i}` } });
      expect(again.isError).not.toBe(true);
    }
    const calls = balancer.served.slice(before).filter((s) => s.path.startsWith('/mcp'));
    expect(new Set(calls.filter((s) => s.status === 200).map((s) => s.by))).toEqual(new Set(origins));
    await client.close();
    await page.close();
  }, 120_000);

  /** The token endpoint and the client id, as the SDK found and registered them. */
  async function tokenRequest(
    provider: MemoryOAuthClient,
    refreshToken: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const metadata = (await (
      await fetch(`${w.stack.baseUrl}/.well-known/oauth-authorization-server/mcp-oauth`)
    ).json()) as {
      token_endpoint: string;
    };
    const answer = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: provider.clientInformation()!.client_id,
        resource: endpoint.href,
      }).toString(),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  }

  async function connectedApps(): Promise<string[]> {
    const listed = await w.http.get<{ apps: Array<{ clientName: string }> }>('/api/connected-apps', {
      token: setup.token,
    });
    expect(listed.status).toBe(200);
    return listed.body.apps.map((a) => a.clientName);
  }

  it("a token for the team workspace sees its tools only; not the personal account's site", async () => {
    const appName = 'Proof Team Desk';
    const provider = new MemoryOAuthClient(app.redirectUri, appName);
    const page = await w.newPage();
    const client = await connectThroughConsent(page, provider, roundRobin(origins), appName, 'Beta team');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => /beta/i.test(n))).toHaveLength(1);
    expect(names.filter((n) => n.includes('__search_notes'))).toEqual([]);
    await client.close();
    await page.close();
  }, 120_000);

  it('the SDK refreshes with a rotated refresh token; a replayed one is refused and ends the grant', async () => {
    const appName = 'Proof Replay';
    const provider = new MemoryOAuthClient(app.redirectUri, appName);
    const balancer = roundRobin(origins);
    const page = await w.newPage();
    const client = await connectThroughConsent(page, provider, balancer, appName);
    const first = provider.tokens()!.refresh_token!;
    // An access token the endpoint refuses: the SDK refreshes, and the refresh token rotates.
    provider.forgetAccessToken();
    await client.listTools(undefined, FRESH);
    const second = provider.tokens()!.refresh_token!;
    expect(second).toEqual(expect.any(String));
    expect(second).not.toBe(first);
    expect(provider.savedTokens).toHaveLength(2);
    expect(await connectedApps()).toContain(appName);

    // The first refresh token again (stolen and replayed): refused, and the grant ends with it.
    provider.useRefreshToken(first);
    provider.forgetAccessToken();
    const asked = provider.authorizationUrls.length;
    await expect(client.listTools(undefined, FRESH)).rejects.toBeInstanceOf(UnauthorizedError);
    // The SDK's only way on is to ask the user again.
    expect(provider.authorizationUrls.length).toBe(asked + 1);
    expect(await tokenRequest(provider, second)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The account page no longer lists it (removed as the provider revokes the grant).
    await eventually('the replayed grant leaves Connected apps', async () =>
      (await connectedApps()).includes(appName) ? undefined : true,
    );
    await client.close();
    await page.close();
  }, 120_000);

  it('revoking the app in Connected apps makes its next call fail', async () => {
    const appName = 'Proof Revoked';
    const provider = new MemoryOAuthClient(app.redirectUri, appName);
    const page = await w.newPage();
    const client = await connectThroughConsent(page, provider, roundRobin(origins), appName);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    await page.goto('/account#connected-apps');
    const section = page.getByRole('region', { name: 'Connected apps' });
    await section.getByRole('button', { name: `Revoke ${appName}` }).click();
    await section.getByRole('button', { name: `Yes, disconnect ${appName}` }).click();
    await section.locator('tbody tr').filter({ hasText: appName }).waitFor({ state: 'detached' });
    expect(await connectedApps()).not.toContain(appName);

    const asked = provider.authorizationUrls.length;
    await expect(client.listTools(undefined, FRESH)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrls.length).toBe(asked + 1);
    await client.close();
    await page.close();
  }, 120_000);

  it('a 2025-11-25 client (the v1 SDK) with the same OAuth access token runs the agent as a task to completion and cancels another', async () => {
    expect(personal).toBeDefined();
    const { accessToken, agentTool } = personal!;
    const client = await legacyClient(endpoint.href, { authorization: `Bearer ${accessToken}` });
    let release: () => void = () => undefined;
    try {
      w.model.script({ text: 'Done as a task.' });
      const created = await client.request(
        { method: 'tools/call', params: { name: agentTool, arguments: { input: 'As a task' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'Done as a task.' }]);
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
      expect((await w.http.get(`/api/runs/${taskId}`, { token: setup.token })).body).toMatchObject({
        status: 'completed',
        input: 'As a task',
      });

      // A run held at its model turn, cancelled as a task: the run is cancelled.
      const gate = new Promise<void>((resolve) => (release = resolve));
      w.model.script({ gate, text: 'Never seen.' });
      const held = await client.request(
        { method: 'tools/call', params: { name: agentTool, arguments: {}, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const cancelled = await client.experimental.tasks.cancelTask(held.task.taskId);
      expect(cancelled).toMatchObject({ taskId: held.task.taskId, status: 'cancelled' });
      expect((await w.http.get(`/api/runs/${held.task.taskId}`, { token: setup.token })).body.status).toBe('cancelled');
    } finally {
      release();
      await client.close();
    }
  }, 120_000);
});
