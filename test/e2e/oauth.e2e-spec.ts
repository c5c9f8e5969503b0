import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { testEnv } from '../setup/shared-runtime.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import { expectError, Http } from '../utils/http.js';
import { approveAtSite, siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack, TEST_VAULT_KEY } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('OAuth 2.0 + PKCE connections, refresh and rotation (e2e)', () => {
  let sites: TestSites;
  let stack: Stack;
  let http: Http;
  const started: Stack[] = [];

  beforeAll(async () => {
    sites = await testSites();
  });

  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    await sites?.stopAll();
  });

  /** A site of its own per test (outgoing limits and grant state stay apart), and a stack that trusts it. */
  /** A new, empty database on the shared PostgreSQL server (the service migrates it at start). */
  async function isolatedDatabase(): Promise<string> {
    const url = new URL(testEnv('databaseUrl'));
    const name = `rotate_${Date.now()}`;
    const admin = new pg.Client({
      connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString(),
    });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    url.pathname = `/${name}`;
    return url.toString();
  }

  async function fresh(options: { accessTokenTtlSeconds?: number; env?: Record<string, string> } = {}) {
    const site = await sites.start({ accessTokenTtlSeconds: options.accessTokenTtlSeconds });
    stack = await Stack.start({ worker: false, env: { ...siteEnv(sites, [site]), ...options.env } });
    started.push(stack);
    http = new Http(stack.baseUrl);
    site.allowRedirect('agentsite', `${stack.baseUrl}/api/oauth/callback`);
    const user = await registerUser(http);
    const added = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body;
    return { site, user, siteId: added.id as string };
  }

  async function connect(site: ReferenceSite, user: TestUser, siteId: string, tools?: string[]) {
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, tools ? { tools } : {}, {
      token: user.token,
    });
    expect(start.status).toBe(200);
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    const done = await http.get(`${callback.pathname}${callback.search}`);
    return { start, callback, done };
  }

  it('connects with PKCE verified by the site, asking only for the scopes of the chosen tools', async () => {
    const { site, user, siteId } = await fresh();
    const { start, callback, done } = await connect(site, user, siteId, ['search_notes', 'get_note']);
    const authorization = new URL(start.body.authorizationUrl);
    expect(authorization.origin + authorization.pathname).toBe(`${site.url}/oauth/authorize`);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'agentsite',
      redirect_uri: `${stack.baseUrl}/api/oauth/callback`,
      scope: 'read',
      code_challenge_method: 'S256',
    });
    expect(authorization.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(callback.searchParams.get('state')).toBe(authorization.searchParams.get('state'));
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ siteId, scopes: ['read'], connected: true });
    expect(site.stats.codeExchanges).toBe(1);

    const described = await http.get(`/api/vault/sites/${siteId}`, { token: user.token });
    expect(described.body.credential).toMatchObject({ kind: 'oauth2', status: 'active', scopes: ['read'] });
    expect(Date.parse(described.body.credential.expiresAt) - Date.now()).toBeGreaterThan(3500_000);

    const listed = await http.post(
      `/api/vault/sites/${siteId}/tools/list_notes/call`,
      { input: {} },
      { token: user.token },
    );
    expect(listed.status).toBe(200);
    // The read-only grant cannot write: the site answers 403.
    expectError(
      await http.post(
        `/api/vault/sites/${siteId}/tools/create_note/call`,
        { input: { title: 'x' } },
        { token: user.token },
      ),
      'TOOL_EXECUTION_ERROR',
      502,
    );

    // Replaying the callback, or inventing a state, is refused and changes nothing.
    const replay = await http.get(`${callback.pathname}${callback.search}`);
    expectError(replay, 'VALIDATION_ERROR', 400);
    expect(replay.body.details[0].field).toBe('state');
    expectError(await http.get(`/api/oauth/callback?code=abc&state=${'x'.repeat(43)}`), 'VALIDATION_ERROR', 400);
    expectError(await http.get('/api/oauth/callback?code=abc'), 'VALIDATION_ERROR', 400);
    expect(site.stats.codeExchanges).toBe(1);
  });

  it('asks for every needed scope when no tools are named; refuses unknown tools and bearer-only sites', async () => {
    const { user, siteId } = await fresh();
    const all = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    expect(new URL(all.body.authorizationUrl).searchParams.get('scope')).toBe('read write delete admin');
    const some = await http.post(
      `/api/vault/sites/${siteId}/oauth/start`,
      { tools: ['create_note', 'delete_note'] },
      { token: user.token },
    );
    expect(new URL(some.body.authorizationUrl).searchParams.get('scope')).toBe('write delete');
    expectError(
      await http.post(`/api/vault/sites/${siteId}/oauth/start`, { tools: ['nope'] }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );

    const bearerSite = await sites.start();
    const bearerStack = await Stack.start({ worker: false, env: siteEnv(sites, [bearerSite]) });
    started.push(bearerStack);
    const bearerHttp = new Http(bearerStack.baseUrl);
    bearerSite.manifestOverride = { json: { ...bearerSite.manifest(), auth: { type: 'bearer' } } };
    const owner = await registerUser(bearerHttp);
    const added = await bearerHttp.post('/api/vault/sites', { url: bearerSite.url }, { token: owner.token });
    expect(added.body.auth).toEqual({ type: 'bearer' });
    const refused = await bearerHttp.post(`/api/vault/sites/${added.body.id}/oauth/start`, {}, { token: owner.token });
    expectError(refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details[0].message).toContain('bearer');
  });

  it('a state belongs to one user and site: a denied consent consumes it and stores nothing', async () => {
    const { user, siteId } = await fresh();
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const denied = await approveAtSite(sites.ca, start.body.authorizationUrl, undefined, 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    const res = await http.get(`${denied.pathname}${denied.search}`);
    expectError(res, 'VALIDATION_ERROR', 400);
    expect(res.body.details[0].message).toContain('access_denied');
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: user.token })).body.credential.kind).toBeNull();
  });

  it('refreshes once on a 401, and ahead of expiry', async () => {
    const { site, user, siteId } = await fresh({ accessTokenTtlSeconds: 3600 });
    await connect(site, user, siteId);
    site.expireAccessTokens();
    const call = () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token });
    expect((await call()).status).toBe(200);
    expect(site.stats.refreshes).toBe(1);
    expect((await call()).status).toBe(200);
    expect(site.stats.refreshes).toBe(1);

    // A site whose access tokens live 30 s: inside the refresh skew, so every call refreshes first.
    const short = await fresh({ accessTokenTtlSeconds: 30 });
    await connect(short.site, short.user, short.siteId);
    const before = short.site.stats.toolCalls;
    expect(
      (
        await http.post(
          `/api/vault/sites/${short.siteId}/tools/list_notes/call`,
          { input: {} },
          { token: short.user.token },
        )
      ).status,
    ).toBe(200);
    expect(short.site.stats.refreshes).toBe(1);
    expect(short.site.stats.toolCalls - before).toBe(1); // no failed first attempt
  });

  it('10 concurrent calls from two API processes with an expired token: exactly one refresh, no invalid_grant', async () => {
    const env = { OUTGOING_CALLS_PER_MINUTE: '1000' };
    const { site, user, siteId } = await fresh({ env });
    await connect(site, user, siteId);
    const second = await Stack.start({ worker: false, env: { ...siteEnv(sites, [site]), ...env } });
    started.push(second);
    site.expireAccessTokens();
    const https = [http, new Http(second.baseUrl)];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        https[i % 2]!.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token }),
      ),
    );
    // A failed call shows its error body, not just its status.
    expect(results.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.text}`))).toEqual(Array(10).fill(200));
    expect(site.stats.refreshes).toBe(1);
    expect(site.stats.invalidGrants).toBe(0);
  });

  it('invalid_grant marks the credential reauth_required, visibly, and is not retried in a loop', async () => {
    const { site, user, siteId } = await fresh();
    await connect(site, user, siteId);
    site.revokeAllGrants();
    site.expireAccessTokens();
    const call = () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token });
    const first = await call();
    expectError(first, 'TOOL_EXECUTION_ERROR', 502);
    expect(first.body.error).toMatch(/reconnect/i);
    expect(site.stats.invalidGrants).toBe(1);
    const described = await http.get(`/api/vault/sites/${siteId}`, { token: user.token });
    expect(described.body.credential).toMatchObject({ kind: 'oauth2', status: 'reauth_required' });
    // Further calls do not touch the token endpoint again; the credential is kept, not deleted.
    expectError(await call(), 'TOOL_EXECUTION_ERROR', 502);
    expect(site.stats.invalidGrants).toBe(1);
    // Reconnecting brings it back.
    await connect(site, user, siteId);
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: user.token })).body.credential.status).toBe('active');
    expect((await call()).status).toBe(200);
  });

  it('vault:rotate re-encrypts every entry under the new key; the old key can then be dropped', async () => {
    // A database of its own: rotation rewrites every entry, and other suites share the main one.
    const databaseUrl = await isolatedDatabase();
    const { site, user, siteId } = await fresh({ env: { DATABASE_URL: databaseUrl } });
    await connect(site, user, siteId);
    const newKey = `t2:${Buffer.alloc(32, 7).toString('base64')}`;
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(distRoot, 'scripts', 'vault-rotate.js')], {
        env: { ...stack.env, VAULT_KEY: `${newKey},${TEST_VAULT_KEY}` },
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(out))));
    });
    expect(output).toMatch(/site_credentials: re-encrypted [1-9]\d* of [1-9]\d* entries under key "t2"/);
    const rotated = await Stack.start({
      worker: false,
      env: { ...siteEnv(sites, [site]), VAULT_KEY: newKey, DATABASE_URL: databaseUrl },
    });
    started.push(rotated);
    const res = await new Http(rotated.baseUrl).post(
      `/api/vault/sites/${siteId}/tools/list_notes/call`,
      { input: {} },
      { token: user.token },
    );
    expect(res.status).toBe(200);
  });
});
