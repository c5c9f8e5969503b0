import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { callerHeaders, rawPost } from '../fixtures/mcp-server/clients.js';
import { ClientDocumentServer } from '../fixtures/mcp-auth/client-document-server.js';
import { CookieJar, McpOAuthClient, pkce } from '../fixtures/mcp-auth/mcp-oauth-client.js';
import { registerAdmin } from '../utils/admin.js';
import { testSites, type TestSites } from '../utils/site.js';
import { joinWorkspace } from '../utils/workspaces.js';
import { expectError, Http, rawRequest } from '../utils/http.js';
import { sql } from '../utils/db.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';

const REDIRECT_URI = 'http://127.0.0.1:33418/callback';

describe('agentsite as an OAuth 2.1 authorization server for MCP clients (e2e)', () => {
  let stack: Stack;
  let http: Http;
  let oauth: McpOAuthClient;
  let resource: string;
  let sites: TestSites;
  /** A Client ID Metadata Document on a loopback address the service is allowed to reach (SITE_ALLOW_PRIVATE_HOSTS). */
  let allowedDocument: ClientDocumentServer;
  /** One on a loopback address it is not allowed to reach. */
  let privateDocument: ClientDocumentServer;

  beforeAll(async () => {
    sites = await testSites();
    allowedDocument = await ClientDocumentServer.start(sites.ca, {
      client_name: 'Document client',
      redirect_uris: [REDIRECT_URI],
    });
    privateDocument = await ClientDocumentServer.start(sites.ca, {
      client_name: 'Private client',
      redirect_uris: [REDIRECT_URI],
    });
    stack = await Stack.start({
      worker: false,
      env: {
        MCP_ACCESS_TOKEN_SECONDS: '600',
        MCP_REFRESH_TOKEN_DAYS: '7',
        SITE_CA_CERTS: sites.caFile,
        SITE_ALLOW_PRIVATE_HOSTS: `localhost:${allowedDocument.port}`,
      },
    });
    http = new Http(stack.baseUrl);
    oauth = new McpOAuthClient(stack.baseUrl);
    resource = `${stack.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await stack?.stop();
    await allowedDocument?.stop();
    await privateDocument?.stop();
  });

  async function registerClient(extra: Record<string, unknown> = {}): Promise<string> {
    const registered = await oauth.register({
      client_name: 'Test MCP client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...extra,
    });
    expect(registered.status).toBe(201);
    return registered.body.client_id as string;
  }

  /** authorize → 303 to /connect/{uid}; answers the uid and the jar holding the provider's cookies. */
  async function startAuthorization(clientId: string, challenge: string, extra: Record<string, string> = {}) {
    const jar = new CookieJar();
    const res = await oauth.get(
      oauth.authorizationUrl({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        scope: 'mcp',
        resource,
        state: 'state-1',
        ...extra,
      }),
      jar,
    );
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location') ?? '', stack.baseUrl);
    expect(location.origin + location.pathname).toMatch(new RegExp(`^${stack.baseUrl}/connect/[A-Za-z0-9_-]+$`));
    return { jar, uid: location.pathname.split('/').pop() as string };
  }

  /** The whole flow as the user approves it: answers the tokens. */
  async function connectApp(user: TestUser, options: { workspaceId?: string | null; clientId?: string } = {}) {
    const clientId = options.clientId ?? (await registerClient());
    const { verifier, challenge } = pkce();
    const { jar, uid } = await startAuthorization(clientId, challenge);
    const decided = await http.post(
      `/api/mcp-consent/${uid}`,
      { approve: true, workspaceId: options.workspaceId ?? null },
      { token: user.token },
    );
    expect(decided.status).toBe(200);
    const back = await oauth.follow(decided.body.redirectTo, jar, REDIRECT_URI);
    expect(back.searchParams.get('state')).toBe('state-1');
    expect(back.searchParams.get('iss')).toBe(oauth.issuer);
    const code = back.searchParams.get('code') ?? '';
    const tokens = await oauth.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      client_id: clientId,
      resource,
    });
    expect(tokens.status).toBe(200);
    return { clientId, uid, tokens: tokens.body, code, verifier };
  }

  it('connects a dynamically registered client: consent, code with PKCE, token bound to /mcp, rotation, reuse revokes the grant', async () => {
    const user = await registerUser(http);
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const { jar, uid } = await startAuthorization(clientId, challenge);

    const asked = await http.get(`/api/mcp-consent/${uid}`, { token: user.token });
    expect(asked.status).toBe(200);
    expect(asked.body).toEqual({
      uid,
      client: { id: clientId, name: 'Test MCP client', uri: null, logoUri: null, redirectHost: '127.0.0.1:33418' },
      scopes: ['mcp'],
      workspaces: [{ id: null, name: 'Personal', role: 'owner' }],
    });

    const decided = await http.post(
      `/api/mcp-consent/${uid}`,
      { approve: true, workspaceId: null },
      { token: user.token },
    );
    expect(decided.status).toBe(200);
    expect(decided.body.redirectTo).toMatch(new RegExp(`^${oauth.issuer}/auth/${uid}$`));
    // Answered once: a second answer finds nothing to answer.
    expectError(
      await http.post(`/api/mcp-consent/${uid}`, { approve: false, workspaceId: null }, { token: user.token }),
      'SESSION_NOT_FOUND',
      404,
    );

    const back = await oauth.follow(decided.body.redirectTo, jar, REDIRECT_URI);
    const code = back.searchParams.get('code') ?? '';
    expect(code).not.toBe('');
    const tokens = await oauth.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      client_id: clientId,
      resource,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'mcp' });
    const first = tokens.body.refresh_token ?? '';
    expect(first).not.toBe('');
    const refreshed = await oauth.token({ grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(refreshed.body.error).toBeUndefined();
    expect(refreshed.status).toBe(200);
    const second = refreshed.body.refresh_token ?? '';
    expect(second).not.toBe('');
    expect(second).not.toBe(first);
    expect(refreshed.body.access_token).not.toBe(tokens.body.access_token);

    // The consumed refresh token again: refused, and the grant revoked, so the new one fails too.
    const replayed = await oauth.token({ grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');
    const afterReplay = await oauth.token({ grant_type: 'refresh_token', refresh_token: second, client_id: clientId });
    expect(afterReplay.status).toBe(400);
    expect(afterReplay.body.error).toBe('invalid_grant');
  });
  it('takes a code once: its replay is refused and revokes what it gave', async () => {
    const user = await registerUser(http);
    const { clientId, code, verifier, tokens } = await connectApp(user);
    const again = await oauth.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      client_id: clientId,
      resource,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    const refresh = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });
  it('stores no code or token in clear: their rows are keyed by a SHA-256 and carry no copy', async () => {
    const user = await registerUser(http);
    const { tokens, code } = await connectApp(user);
    for (const value of [tokens.access_token ?? '', tokens.refresh_token ?? '', code]) {
      expect(value.length).toBeGreaterThan(20);
      const rows = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM mcp_authorization_state WHERE id = $1 OR payload::text LIKE '%' || $1 || '%'`,
        [value],
      );
      expect(rows[0].n).toBe(0);
      const hashed = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM mcp_authorization_state WHERE id = encode(sha256(convert_to($1, 'UTF8')), 'hex')`,
        [value],
      );
      expect(hashed[0].n).toBe(1);
    }
  });

  it('refuses an authorization request without PKCE, with plain PKCE, or for another resource', async () => {
    const clientId = await registerClient();
    const { challenge } = pkce();
    const jar = new CookieJar();
    const base = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'mcp',
      state: 's',
    };
    const refused = async (params: Record<string, string | undefined>) => {
      const res = await oauth.get(oauth.authorizationUrl({ ...base, ...params }), jar);
      expect(res.status).toBe(303);
      const back = new URL(res.headers.get('location') ?? '');
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      const answer = new URLSearchParams(back.searchParams);
      for (const [name, value] of new URLSearchParams(back.hash.slice(1))) {
        answer.set(`fragment:${name}`, value);
      }
      return answer;
    };
    const missing = await refused({});
    expect(missing.get('error')).toBe('invalid_request');
    expect(missing.get('error_description')).toMatch(/PKCE/);
    const plain = await refused({ code_challenge: challenge, code_challenge_method: 'plain' });
    expect(plain.get('error')).toBe('invalid_request');
    const elsewhere = await refused({
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: 'https://elsewhere.example/mcp',
    });
    expect(elsewhere.get('error')).toBe('invalid_target');
    // Only the code flow: an implicit request is refused.
    const implicit = await refused({
      response_type: 'token',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    // (an error of a response type with a token is told in the fragment, where that type would put it)
    expect(implicit.get('error') ?? implicit.get('fragment:error')).toBe('unsupported_response_type');
  });

  it('answers bad input to its endpoints with OAuth error JSON, never a 500', async () => {
    const unknownClient = await fetch(
      oauth.authorizationUrl({ response_type: 'code', client_id: 'nobody', redirect_uri: REDIRECT_URI }),
      { redirect: 'manual' },
    );
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.headers.get('content-type')).toMatch(/application\/json/);
    expect(await unknownClient.json()).toMatchObject({ error: 'invalid_client' });
    const badToken = await oauth.token({ grant_type: 'authorization_code', code: 'x', client_id: 'nobody' });
    expect(badToken.status).toBe(401);
    expect(badToken.body.error).toBe('invalid_client');
    const junk = await fetch(`${oauth.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(junk.status).toBeLessThan(500);
    expect(((await junk.json()) as { error: string }).error).toMatch(/^invalid_/);
    const badRegistration = await oauth.register({ redirect_uris: ['not a url'] });
    expect(badRegistration.status).toBe(400);
    expect(badRegistration.body.error).toBe('invalid_redirect_uri');
  });

  it('tells the client access_denied when the user refuses', async () => {
    const user = await registerUser(http);
    const clientId = await registerClient();
    const { challenge } = pkce();
    const { jar, uid } = await startAuthorization(clientId, challenge);
    const decided = await http.post(
      `/api/mcp-consent/${uid}`,
      { approve: false, workspaceId: null },
      { token: user.token },
    );
    expect(decided.status).toBe(200);
    const back = await oauth.follow(decided.body.redirectTo, jar, REDIRECT_URI);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect(back.searchParams.get('state')).toBe('state-1');
    expect((await http.get('/api/connected-apps', { token: user.token })).body.apps).toEqual([]);
  });

  it('checks the consent request: unknown uid, bad body, a workspace the user is not in', async () => {
    const user = await registerUser(http);
    expectError(await http.get('/api/mcp-consent/nosuchuid', { token: user.token }), 'SESSION_NOT_FOUND', 404);
    expectError(await http.get('/api/mcp-consent/nosuchuid'), 'UNAUTHORIZED', 401);
    const clientId = await registerClient();
    const { uid } = await startAuthorization(clientId, pkce().challenge);
    for (const body of [{ approve: 'yes', workspaceId: null }, { approve: true }, { approve: true, workspaceId: 3 }]) {
      expectError(await http.post(`/api/mcp-consent/${uid}`, body, { token: user.token }), 'VALIDATION_ERROR', 400);
    }
    expectError(
      await http.post(
        `/api/mcp-consent/${uid}`,
        { approve: true, workspaceId: '00000000-0000-4000-8000-000000000000' },
        { token: user.token },
      ),
      'WORKSPACE_NOT_FOUND',
      404,
    );
  });
  it('lists the connected app with its workspace; revoking it ends its tokens at once; only its user may', async () => {
    const admin = await registerAdmin(http, stack);
    const owner = await registerUser(http);
    const viewer = await registerUser(http);
    expect((await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team' }, { token: admin.token })).status).toBe(
      200,
    );
    const workspace = await http.post('/api/workspaces', { name: 'Research' }, { token: owner.token });
    expect(workspace.status).toBe(201);
    await joinWorkspace(http, workspace.body.id, owner.token, viewer, 'viewer');

    // A viewer is offered the workspace and may connect an app to it (what the app may do there is a viewer's).
    const { uid } = await startAuthorization(await registerClient(), pkce().challenge);
    const offered = await http.get(`/api/mcp-consent/${uid}`, { token: viewer.token });
    expect(offered.body.workspaces).toEqual([
      { id: null, name: 'Personal', role: 'owner' },
      { id: workspace.body.id, name: 'Research', role: 'viewer' },
    ]);

    const { clientId, tokens } = await connectApp(owner, { workspaceId: workspace.body.id });
    await connectApp(viewer, { workspaceId: workspace.body.id });
    const listed = await http.get('/api/connected-apps', { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.apps).toHaveLength(1);
    const [app] = listed.body.apps;
    expect(app).toEqual({
      id: expect.any(String),
      clientId,
      clientName: 'Test MCP client',
      redirectHost: '127.0.0.1:33418',
      workspace: { id: workspace.body.id, name: 'Research' },
      createdAt: expect.any(String),
      lastUsedAt: null,
    });

    expectError(await http.delete(`/api/connected-apps/${app.id}`, { token: viewer.token }), 'NOT_FOUND', 404);
    expectError(await http.delete('/api/connected-apps/not-a-uuid', { token: owner.token }), 'NOT_FOUND', 404);
    const refreshed = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);

    const [{ grant_id: grantId }] = await sql<{ grant_id: string }>(
      'SELECT grant_id FROM connected_apps WHERE id = $1',
      [app.id],
    );
    expect((await http.delete(`/api/connected-apps/${app.id}`, { token: owner.token })).status).toBe(204);
    expect((await http.get('/api/connected-apps', { token: owner.token })).body.apps).toEqual([]);
    const afterRevoke = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: clientId,
    });
    expect(afterRevoke.status).toBe(400);
    expect(afterRevoke.body.error).toBe('invalid_grant');
    const rows = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM mcp_authorization_state WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`,
      [grantId],
    );
    expect(rows[0].n).toBe(0);
    // The viewer's own app is untouched.
    expect((await http.get('/api/connected-apps', { token: viewer.token })).body.apps).toHaveLength(1);
  });

  it('revokes a token at the revocation endpoint', async () => {
    const user = await registerUser(http);
    const { clientId, tokens } = await connectApp(user);
    expect(await oauth.revoke({ token: tokens.refresh_token ?? '', client_id: clientId })).toBe(200);
    const refresh = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refuses its access tokens at /api: they are for /mcp only', async () => {
    const user = await registerUser(http);
    const { tokens } = await connectApp(user);
    const me = await http.get('/api/me', { token: tokens.access_token });
    expect(me.status).toBe(401);
    expect(['UNAUTHORIZED', 'INVALID_TOKEN']).toContain(me.body.code);
    expect((await http.get('/api/me', { token: user.token })).status).toBe(200);
  });

  it("takes a client described by a Client ID Metadata Document, fetched under the sites' network rules", async () => {
    const user = await registerUser(http);
    const clientId = allowedDocument.url;
    const { tokens, uid } = await connectApp(user, { clientId });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(allowedDocument.fetches).toBeGreaterThan(0);
    const apps = (await http.get('/api/connected-apps', { token: user.token })).body.apps;
    expect(apps).toEqual([expect.objectContaining({ clientId, clientName: 'Document client', workspace: null })]);
    expect(uid).toEqual(expect.any(String));

    // On a private address that SITE_ALLOW_PRIVATE_HOSTS does not name: never fetched, refused.
    const refused = await fetch(
      oauth.authorizationUrl({
        response_type: 'code',
        client_id: privateDocument.url,
        redirect_uri: REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual' },
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
    expect(privateDocument.fetches).toBe(0);
  });

  it('publishes the protected-resource and authorization-server metadata, readable from any origin', async () => {
    const origin = { headers: { origin: 'https://inspector.example' } };
    const prm = await fetch(`${stack.baseUrl}/.well-known/oauth-protected-resource/mcp`, origin);
    expect(prm.status).toBe(200);
    expect(prm.headers.get('access-control-allow-origin')).toBe('*');
    expect(await prm.json()).toEqual({
      resource,
      authorization_servers: [oauth.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
    });
    for (const path of [
      '/.well-known/oauth-authorization-server/mcp-oauth',
      '/mcp-oauth/.well-known/oauth-authorization-server',
    ]) {
      const res = await fetch(`${stack.baseUrl}${path}`, origin);
      expect(res.status).toBe(200);
      // oidc-provider names the asking origin (any origin: the document takes no credentials).
      expect(['*', 'https://inspector.example']).toContain(res.headers.get('access-control-allow-origin'));
      const metadata = (await res.json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({
        issuer: oauth.issuer,
        authorization_endpoint: `${oauth.issuer}/auth`,
        token_endpoint: `${oauth.issuer}/token`,
        registration_endpoint: `${oauth.issuer}/reg`,
        revocation_endpoint: `${oauth.issuer}/token/revocation`,
        code_challenge_methods_supported: ['S256'],
        client_id_metadata_document_supported: true,
        response_types_supported: ['code'],
      });
      expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
      expect(metadata.grant_types_supported).not.toContain('client_credentials');
      expect(metadata.grant_types_supported).not.toContain('implicit');
      expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
      expect(metadata).not.toHaveProperty('introspection_endpoint');
      expect(metadata).not.toHaveProperty('device_authorization_endpoint');
    }
    // Whatever origin a request claims, the documents name PUBLIC_BASE_URL's endpoints.
    const forged = await rawRequest(stack.baseUrl, 'GET', '/.well-known/oauth-authorization-server/mcp-oauth', {
      host: 'attacker.example',
      'x-forwarded-host': 'attacker.example',
      'x-forwarded-proto': 'https',
    });
    expect(forged.status).toBe(200);
    expect(forged.body.token_endpoint).toBe(`${oauth.issuer}/token`);
    const preflight = await fetch(`${oauth.issuer}/token`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://inspector.example');
  });

  it('serves /mcp to its access tokens while the app is connected: last use recorded, expired or revoked refused', async () => {
    const user = await registerUser(http);
    const { tokens, clientId } = await connectApp(user);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const mcp = `${stack.baseUrl}/mcp`;
    // This stack takes no API token at /mcp (MCP_ALLOW_API_TOKENS off): only the OAuth one works.
    expect((await rawPost(mcp, list, callerHeaders(user.token))).status).toBe(401);
    const served = await rawPost(mcp, list, callerHeaders(tokens.access_token ?? ''));
    expect(served.status).toBe(200);
    expect(served.json).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: expect.any(Array) } });
    const [app] = (await http.get('/api/connected-apps', { token: user.token })).body.apps;
    expect(app.lastUsedAt).toEqual(expect.any(String));

    // Expired (its row's expiry moved to the past): refused with the challenge.
    const second = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(second.status).toBe(200);
    await sql(
      `UPDATE mcp_authorization_state SET expires_at = now() - interval '1 second'
       WHERE model = 'AccessToken' AND id = encode(sha256(convert_to($1, 'UTF8')), 'hex')`,
      [tokens.access_token],
    );
    const expired = await rawPost(mcp, list, callerHeaders(tokens.access_token ?? ''));
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // The refreshed token works until the app is disconnected, then at once no more.
    expect((await rawPost(mcp, list, callerHeaders(second.body.access_token ?? ''))).status).toBe(200);
    expect((await http.delete(`/api/connected-apps/${app.id}`, { token: user.token })).status).toBe(204);
    expect((await rawPost(mcp, list, callerHeaders(second.body.access_token ?? ''))).status).toBe(401);
  });

  it('stops serving /mcp to the tokens of a grant revoked by a replayed refresh token', async () => {
    const user = await registerUser(http);
    const { tokens, clientId } = await connectApp(user);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const mcp = `${stack.baseUrl}/mcp`;
    const rotated = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect((await rawPost(mcp, list, callerHeaders(rotated.body.access_token ?? ''))).status).toBe(200);
    const replayed = await oauth.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(replayed.body.error).toBe('invalid_grant');
    expect((await rawPost(mcp, list, callerHeaders(rotated.body.access_token ?? ''))).status).toBe(401);
  });

  it("lets a second user of the same browser connect after the first (the provider's session is theirs then)", async () => {
    const first = await registerUser(http);
    const second = await registerUser(http);
    const clientId = await registerClient();
    const jar = new CookieJar();
    for (const user of [first, second]) {
      const { verifier, challenge } = pkce();
      const started = await oauth.get(
        oauth.authorizationUrl({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT_URI,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          scope: 'mcp',
          resource,
        }),
        jar,
      );
      // The consent is asked every time, even with the provider's session of the first user in the jar.
      expect(started.status).toBe(303);
      const uid = new URL(started.headers.get('location') ?? '').pathname.split('/').pop() ?? '';
      const decided = await http.post(
        `/api/mcp-consent/${uid}`,
        { approve: true, workspaceId: null },
        { token: user.token },
      );
      const back = await oauth.follow(decided.body.redirectTo, jar, REDIRECT_URI);
      const tokens = await oauth.token({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_id: clientId,
        resource,
      });
      expect(tokens.status).toBe(200);
      const served = await rawPost(
        `${stack.baseUrl}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        callerHeaders(tokens.body.access_token ?? ''),
      );
      expect(served.status).toBe(200);
      expect((await http.get('/api/connected-apps', { token: user.token })).body.apps).toHaveLength(1);
    }
  });

  it('gives tokens the configured lifetimes and answers browser clients at the token endpoint (CORS)', async () => {
    const user = await registerUser(http);
    const { tokens, clientId } = await connectApp(user);
    const lifetime = async (model: string, value: string | undefined) => {
      const [row] = await sql<{ seconds: number }>(
        `SELECT extract(epoch FROM expires_at - now())::int AS seconds FROM mcp_authorization_state
         WHERE model = $1 AND id = encode(sha256(convert_to($2, 'UTF8')), 'hex')`,
        [model, value],
      );
      return row.seconds;
    };
    expect(await lifetime('AccessToken', tokens.access_token)).toBeGreaterThan(600 - 60);
    expect(await lifetime('AccessToken', tokens.access_token)).toBeLessThanOrEqual(600);
    expect(await lifetime('RefreshToken', tokens.refresh_token)).toBeGreaterThan(7 * 86400 - 60);
    expect(await lifetime('RefreshToken', tokens.refresh_token)).toBeLessThanOrEqual(7 * 86400);
    const refreshed = await oauth.token(
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId },
      { origin: 'https://inspector.example' },
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get('access-control-allow-origin')).toBe('https://inspector.example');
  });

  it('counts its endpoints against the address limit: registrations past it are refused (429)', async () => {
    const limited = await Stack.start({ worker: false, env: { RATE_LIMIT_PER_IP: '5' } });
    try {
      const client = new McpOAuthClient(limited.baseUrl);
      const statuses: number[] = [];
      let refusal: Response | undefined;
      for (let i = 0; i < 8; i += 1) {
        const res = await fetch(`${client.issuer}/reg`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
        });
        statuses.push(res.status);
        if (res.status === 429) {
          refusal = res;
        } else {
          await res.arrayBuffer();
        }
      }
      expect(statuses.filter((status) => status === 201).length).toBeLessThanOrEqual(5);
      expect(statuses.at(-1)).toBe(429);
      expect(Number(refusal?.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refusal?.json()).toMatchObject({ code: 'RATE_LIMITED', statusCode: 429 });
    } finally {
      await limited.stop();
    }
  });

  it('writes no oidc-provider notice or warning (development defaults) to the API log', () => {
    const log = readFileSync(stack.api.logFile, 'utf8');
    expect(log).not.toMatch(/oidc-provider (NOTICE|WARNING)/);
  });
});
