import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PEER_ADMIN_SCOPE,
  PEER_READ_SCOPE,
  PEER_STATIC_CLIENT_ID,
  PEER_STATIC_CLIENT_SECRET,
} from '../fixtures/mcp/oauth-peer.js';
import { REFRESH_SKEW_MS } from '../../src/oauth/token-refresh.service.js';
import { OAuthPeer, type OAuthPeerOptions } from '../fixtures/mcp/oauth-peer.js';
import { sql } from '../utils/db.js';
import { expectError, Http } from '../utils/http.js';
import { approveAtOidcProvider } from '../utils/oidc-site.js';
import { eventually } from '../utils/runs.js';
import { completeOAuth, completionBody, testSites, type TestSites } from '../utils/site.js';
import { Cluster } from '../utils/cluster.js';
import { httpsRequest } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { addMcpSite } from './mcp-oauth.steps.js';

describe('MCP authorization: OAuth 2.1 with PKCE, resource indicators, refresh, step-up and revocation (e2e)', () => {
  let sites: TestSites;
  const peers: OAuthPeer[] = [];
  const stacks: Array<Stack | Cluster> = [];

  beforeAll(async () => {
    sites = await testSites();
  });

  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
    await Promise.all(peers.map((p) => p.stop()));
    await sites?.stopAll();
  });

  /**
   * The tests with default settings and a default peer share one API process, started at first use
   * with a pool of peers it trusts (SITE_ALLOW_PRIVATE_HOSTS names their ports): each test still has a
   * peer (an authorization server and its registrations) of its own, without an API start of its own.
   */
  const PEERS_PER_STACK = 8;
  let pool: { stack: Stack; free: OAuthPeer[] } | undefined;

  async function world(options: { peer?: OAuthPeerOptions; env?: (peer: OAuthPeer) => Record<string, string> } = {}) {
    const stackFor = async (trusted: OAuthPeer[], env: Record<string, string> = {}) => {
      const started = await Stack.start({
        worker: false,
        env: {
          SITE_CA_CERTS: sites.caFile,
          SITE_ALLOW_PRIVATE_HOSTS: trusted.map((p) => `localhost:${p.port}`).join(','),
          OUTGOING_CALLS_PER_MINUTE: '1000',
          ...env,
        },
      });
      stacks.push(started);
      return started;
    };
    let peer: OAuthPeer;
    let stack: Stack;
    if (options.peer === undefined && options.env === undefined) {
      if (pool === undefined || pool.free.length === 0) {
        const free = await Promise.all(Array.from({ length: PEERS_PER_STACK }, () => OAuthPeer.start(sites.ca)));
        peers.push(...free);
        pool = { stack: await stackFor(free), free };
      }
      peer = pool.free.shift()!;
      stack = pool.stack;
    } else {
      peer = await OAuthPeer.start(sites.ca, options.peer);
      peers.push(peer);
      stack = await stackFor([peer], options.env?.(peer));
    }
    peer.allowRedirect(`${stack.baseUrl}/api/oauth/callback`);
    const http = new Http(stack.baseUrl);
    return { peer, stack, http };
  }

  async function connect(http: Http, peer: OAuthPeer, user: TestUser, siteId: string) {
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    expect(start.status).toBe(200);
    const callback = await approveAtOidcProvider(sites.ca, start.body.authorizationUrl, user.email);
    const done = await completeOAuth(http, callback, user.token);
    return { start, callback, done };
  }

  /** The tokens the vault holds for the site (read through the service's own cipher is not possible here: via the peer). */
  async function credentialRow(siteId: string) {
    const rows = await sql<{
      generation: number;
      scopes: string[] | null;
      required_scope: string | null;
      expires_at: Date | null;
    }>('SELECT generation, scopes, required_scope, expires_at FROM site_credentials WHERE site_id = $1', [siteId]);
    return rows[0];
  }

  it('connects from the 401: dynamic registration, PKCE S256, resource on authorize and token, the scope of the challenge', async () => {
    const { peer, http, stack } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    const { start, callback, done } = await connect(http, peer, user, siteId);

    const authorization = new URL(start.body.authorizationUrl);
    const params = Object.fromEntries(authorization.searchParams);
    expect(authorization.origin + authorization.pathname).toBe(`${peer.url}/auth`);
    expect(params).toMatchObject({
      response_type: 'code',
      redirect_uri: `${stack.baseUrl}/api/oauth/callback`,
      code_challenge_method: 'S256',
      resource: peer.endpoint,
      scope: PEER_READ_SCOPE,
    });
    expect(start.body.scopes).toEqual([PEER_READ_SCOPE]);
    // The client id is the one registered dynamically, stored once for the issuer.
    expect(peer.registrations).toEqual([params.client_id]);
    const registered = await sql<{ client_id: string; issuer: string; token_endpoint_auth_method: string }>(
      'SELECT client_id, issuer, token_endpoint_auth_method FROM mcp_oauth_clients WHERE issuer = $1',
      [peer.issuer],
    );
    expect(registered).toEqual([
      { client_id: params.client_id, issuer: peer.issuer, token_endpoint_auth_method: 'none' },
    ]);
    expect(callback.searchParams.get('iss')).toBe(peer.issuer);
    // The Client ID Metadata Document the service would present to a server that supports it.
    const document = await http.get('/api/oauth/client-metadata');
    expect(document.status).toBe(200);
    expect(document.body).toMatchObject({
      client_id: `${stack.baseUrl}/api/oauth/client-metadata`,
      redirect_uris: [`${stack.baseUrl}/api/oauth/callback`],
      token_endpoint_auth_method: 'none',
    });

    expect(done.status).toBe(200);
    expect(done.body).toEqual({ siteId, scopes: [PEER_READ_SCOPE], connected: true });
    expect(peer.grantCount('authorization_code')).toBe(1);
    expect(await credentialRow(siteId)).toMatchObject({ generation: 1, scopes: [PEER_READ_SCOPE] });
    // Listed right after the connection: ready, with the server's tools.
    const site = await http.get(`/api/vault/sites/${siteId}`, { token: user.token });
    expect(site.body).toMatchObject({ protocol: 'mcp', status: 'ready' });
    expect(site.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(['reset_counter', 'whoami']);

    // The token works at the MCP server: bound to its resource.
    const call = await http.post(`/api/vault/sites/${siteId}/tools/whoami/call`, { input: {} }, { token: user.token });
    expect(call.status).toBe(200);
    expect(peer.toolCalls.at(-1)).toEqual({ tool: 'whoami', clientId: params.client_id, scopes: [PEER_READ_SCOPE] });
  });

  it('reuses the registration for every user of one issuer', async () => {
    const { peer, http } = await world();
    const [alice, bob] = [await registerUser(http), await registerUser(http)];
    const aliceSite = await addMcpSite(http, alice, peer);
    const bobSite = await addMcpSite(http, bob, peer);
    const first = await connect(http, peer, alice, aliceSite);
    const second = await connect(http, peer, bob, bobSite);
    expect([first.done.status, second.done.status]).toEqual([200, 200]);
    const clientOf = (url: string) => new URL(url).searchParams.get('client_id');
    expect(clientOf(second.start.body.authorizationUrl)).toBe(clientOf(first.start.body.authorizationUrl));
    expect(peer.registrations).toHaveLength(1);
    expect(await sql('SELECT id FROM mcp_oauth_clients WHERE issuer = $1', [peer.issuer])).toHaveLength(1);
  });

  it('uses the client MCP_OAUTH_CLIENTS names for the issuer (with its secret), and registers none', async () => {
    const { peer, http } = await world({
      env: (p) => ({
        MCP_OAUTH_CLIENTS: JSON.stringify({
          [p.issuer]: { clientId: PEER_STATIC_CLIENT_ID, clientSecret: PEER_STATIC_CLIENT_SECRET },
        }),
      }),
    });
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    const { start, done } = await connect(http, peer, user, siteId);
    expect(new URL(start.body.authorizationUrl).searchParams.get('client_id')).toBe(PEER_STATIC_CLIENT_ID);
    expect(done.status).toBe(200);
    expect(peer.registrations).toEqual([]);
    expect(peer.grants.authorization_code).toEqual({ ok: 1, refused: 0 });
  });

  it('refuses an authorization server without PKCE S256 before anything leaves the service', async () => {
    const { peer, http } = await world({ peer: { s256: false } });
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    expectError(start, 'MANIFEST_INVALID', 422);
    expect(start.body.details).toEqual([expect.objectContaining({ field: 'auth' })]);
    expect(peer.registrations).toEqual([]);
  });

  it("refuses a response whose iss is not the server's issuer, and spends the state", async () => {
    const { peer, http } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const callback = await approveAtOidcProvider(sites.ca, start.body.authorizationUrl, user.email);
    const body = { ...completionBody(callback), iss: 'https://attacker.example' };
    const refused = await http.post('/api/oauth/complete', body, { token: user.token });
    expectError(refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details).toEqual([expect.objectContaining({ field: 'iss' })]);
    expect(peer.grantCount('authorization_code')).toBe(0);
    const again = await http.post('/api/oauth/complete', completionBody(callback), { token: user.token });
    expectError(again, 'VALIDATION_ERROR', 400);
    expect(await credentialRow(siteId)).toBeUndefined();
  });

  it('requires iss of a server that advertises it (RFC 9207), spending the state; a start for a tool the server lacks is refused', async () => {
    const { peer, http } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    const path = `/api/vault/sites/${siteId}/oauth/start`;
    const unknown = await http.post(path, { tools: ['no_such_tool'] }, { token: user.token });
    expectError(unknown, 'VALIDATION_ERROR', 400);
    expect(unknown.body.details).toEqual([expect.objectContaining({ field: 'tools' })]);
    const start = await http.post(path, {}, { token: user.token });
    const callback = await approveAtOidcProvider(sites.ca, start.body.authorizationUrl, user.email);
    // The peer (oidc-provider) advertises authorization_response_iss_parameter_supported and sends iss.
    expect(callback.searchParams.get('iss')).toBe(peer.issuer);
    const { iss: _iss, ...withoutIss } = completionBody(callback);
    const refused = await http.post('/api/oauth/complete', withoutIss, { token: user.token });
    expectError(refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details).toEqual([expect.objectContaining({ field: 'iss' })]);
    expect(peer.grantCount('authorization_code')).toBe(0);
    const again = await http.post('/api/oauth/complete', completionBody(callback), { token: user.token });
    expectError(again, 'VALIDATION_ERROR', 400);
    expect(await credentialRow(siteId)).toBeUndefined();
  });

  it('disconnecting revokes the tokens at the authorization server (refresh token, then access token)', async () => {
    const { peer, http } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    await connect(http, peer, user, siteId);
    const issued = await peer.issuedTokens();
    expect(issued.refresh).toHaveLength(1);
    expect(await peer.refreshTokenActive(issued.refresh[0]!)).toBe(true);

    const deleted = await http.delete(`/api/vault/sites/${siteId}/token`, { token: user.token });
    expect(deleted.status).toBe(204);
    await eventually('both tokens revoked', async () => (peer.revocations.length === 2 ? true : undefined));
    expect(peer.revocations).toEqual(['refresh_token', 'access_token']);
    expect(await peer.refreshTokenActive(issued.refresh[0]!)).toBe(false);
    expect(await peer.accessTokenActive(issued.access[0]!)).toBe(false);
  });

  it('deleting the site revokes its tokens too; a revocation endpoint that fails does not stop the deletion', async () => {
    const { peer, http } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    await connect(http, peer, user, siteId);
    const issued = await peer.issuedTokens();
    peer.failRevocations = true;
    const deleted = await http.delete(`/api/vault/sites/${siteId}`, { token: user.token });
    expect(deleted.status).toBe(204);
    await eventually('revocation attempted', async () => (peer.revocations.length === 2 ? true : undefined));
    expect(await sql('SELECT id FROM sites WHERE id = $1', [siteId])).toEqual([]);
    // It failed at the server: the grant still stands there, and the service logged it.
    expect(await peer.refreshTokenActive(issued.refresh[0]!)).toBe(true);

    const other = await addMcpSite(http, user, peer);
    await connect(http, peer, user, other);
    const next = await peer.issuedTokens();
    const fresh = next.refresh.find((t) => !issued.refresh.includes(t))!;
    peer.failRevocations = false;
    expect((await http.delete(`/api/vault/sites/${other}`, { token: user.token })).status).toBe(204);
    await eventually('revoked', async () => ((await peer.refreshTokenActive(fresh)) ? undefined : true));
  });

  it('step-up: a 403 insufficient_scope is kept on the credential, and the next start asks for the union', async () => {
    const { peer, http } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    await connect(http, peer, user, siteId);
    const refused = await http.post(
      `/api/vault/sites/${siteId}/tools/reset_counter/call`,
      { input: {} },
      { token: user.token },
    );
    expectError(refused, 'TOOL_EXECUTION_ERROR', 502);
    expect((await credentialRow(siteId))?.required_scope).toBe(`${PEER_READ_SCOPE} ${PEER_ADMIN_SCOPE}`);

    const { start, done } = await connect(http, peer, user, siteId);
    expect(new URL(start.body.authorizationUrl).searchParams.get('scope')).toBe(
      `${PEER_READ_SCOPE} ${PEER_ADMIN_SCOPE}`,
    );
    expect(done.body.scopes).toEqual([PEER_READ_SCOPE, PEER_ADMIN_SCOPE]);
    expect((await credentialRow(siteId))?.required_scope).toBeNull();
    const allowed = await http.post(
      `/api/vault/sites/${siteId}/tools/reset_counter/call`,
      { input: {} },
      { token: user.token },
    );
    expect(allowed.status).toBe(200);
    expect(peer.toolCalls.at(-1)).toMatchObject({ tool: 'reset_counter', scopes: [PEER_READ_SCOPE, PEER_ADMIN_SCOPE] });
  });

  /** A refresh presented by hand at the peer's token endpoint, as the registered public client. */
  async function refreshAtPeer(peer: OAuthPeer, refreshToken: string, clientId: string) {
    return httpsRequest(sites.ca, `${peer.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: clientId,
        resource: peer.endpoint,
      }).toString(),
    });
  }

  it('10 concurrent calls across 2 API processes with an expired token: one refresh at the server, rotated; the old refresh token is refused', async () => {
    const peer = await OAuthPeer.start(sites.ca);
    peers.push(peer);
    const cluster = await Cluster.start({
      apis: 2,
      workers: 0,
      env: {
        SITE_CA_CERTS: sites.caFile,
        SITE_ALLOW_PRIVATE_HOSTS: `localhost:${peer.port}`,
        OUTGOING_CALLS_PER_MINUTE: '1000',
      },
    });
    stacks.push(cluster);
    peer.allowRedirect(`${cluster.stack.baseUrl}/api/oauth/callback`);
    const http = cluster.api(0).http;
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    // Access tokens live 61 seconds: long enough for the connection's tool listing to use its token (a
    // token of one second could expire before the listing reached the server, leaving the site without
    // tools), short enough that the service holds it for expired one second after it was stored
    // (REFRESH_SKEW_MS, 60 s before the expiry). Then the server ends it as its expiry would.
    peer.accessTokenTtlSeconds = REFRESH_SKEW_MS / 1000 + 1;
    const { start, done } = await connect(http, peer, user, siteId);
    expect(done.status).toBe(200);
    const clientId = new URL(start.body.authorizationUrl).searchParams.get('client_id')!;
    // The connection listed the server's tools with its token: the calls below find whoami.
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: user.token })).body).toMatchObject({
      status: 'ready',
    });
    peer.accessTokenTtlSeconds = 3600;
    const before = await peer.issuedTokens();
    for (const token of before.access) {
      await peer.expireAccessToken(token);
    }
    expect(await peer.accessTokenActive(before.access.at(-1)!)).toBe(false);
    await eventually('the service holds the stored access token for expired', async () => {
      const expiresAt = (await credentialRow(siteId))!.expires_at;
      return expiresAt !== null && new Date(expiresAt).getTime() - REFRESH_SKEW_MS <= Date.now() ? true : undefined;
    });
    const refreshesBefore = peer.grantCount('refresh_token');
    const generationBefore = (await credentialRow(siteId))!.generation;

    const calls = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        cluster.api(i).http.post(`/api/vault/sites/${siteId}/tools/whoami/call`, { input: {} }, { token: user.token }),
      ),
    );
    expect(calls.map((c) => (c.status === 200 ? 200 : c.text))).toEqual(Array(10).fill(200));
    expect(peer.grantCount('refresh_token')).toBe(refreshesBefore + 1);
    expect(peer.grants.refresh_token?.refused ?? 0).toBe(0);
    expect(peer.toolCalls.filter((c) => c.tool === 'whoami')).toHaveLength(10);
    expect((await credentialRow(siteId))?.generation).toBe(generationBefore + 1);
    // Rotation: the server issued a new refresh token and the one used is spent.
    const spent = before.refresh.at(-1)!;
    expect((await peer.issuedTokens()).refresh).toHaveLength(before.refresh.length + 1);
    expect(await peer.refreshTokenActive(spent)).toBe(false);
    const replayed = await refreshAtPeer(peer, spent, clientId);
    expect(replayed.status).toBe(400);
    expect(JSON.parse(replayed.body)).toMatchObject({ error: 'invalid_grant' });
  });

  it('a token revoked at the server: the call refreshes once, is refused, and answers TOOL_EXECUTION_ERROR', async () => {
    const { peer, http } = await world();
    const user = await registerUser(http);
    const siteId = await addMcpSite(http, user, peer);
    const { start } = await connect(http, peer, user, siteId);
    const clientId = new URL(start.body.authorizationUrl).searchParams.get('client_id')!;
    const issued = await peer.issuedTokens();
    // The user revokes the grant at the server itself (its own account page would).
    const revoked = await httpsRequest(sites.ca, `${peer.url}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: issued.refresh[0]!, client_id: clientId }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect(await peer.accessTokenActive(issued.access[0]!)).toBe(false);

    const call = await http.post(`/api/vault/sites/${siteId}/tools/whoami/call`, { input: {} }, { token: user.token });
    expectError(call, 'TOOL_EXECUTION_ERROR', 502);
    expect(peer.grants.refresh_token).toEqual({ ok: 0, refused: 1 });
    const row = await sql<{ status: string }>('SELECT status FROM site_credentials WHERE site_id = $1', [siteId]);
    expect(row).toEqual([{ status: 'reauth_required' }]);
    // No second attempt: the next call is refused before it reaches the server.
    expectError(
      await http.post(`/api/vault/sites/${siteId}/tools/whoami/call`, { input: {} }, { token: user.token }),
      'TOOL_EXECUTION_ERROR',
      502,
    );
    expect(peer.grantCount('refresh_token')).toBe(1);
    expect(peer.toolCalls).toEqual([]);
  });
});
