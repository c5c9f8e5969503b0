import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { testEnv } from '../setup/shared-runtime.js';
import { openNotifySecret } from '../../src/agents/notify-secret.js';
import type { Settings } from '../../src/config/settings.js';
import { VaultCipher } from '../../src/vault/vault-cipher.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import { expectError, Http } from '../utils/http.js';
import { eventually } from '../utils/runs.js';
import { approveAtOidcProvider, OidcProviderSite } from '../utils/oidc-site.js';
import { approveAtSite, completeOAuth, completionBody, siteEnv, testSites, type TestSites } from '../utils/site.js';
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

  /**
   * The API processes of the tests, one per distinct set of settings, started at first use together
   * with the sites it trusts (SITE_ALLOW_PRIVATE_HOSTS names their ports): each test still gets a
   * site of its own (outgoing limits and grant state stay apart) and users of its own, without
   * waiting for an API process of its own.
   */
  const pools = new Map<string, { stack: Stack; free: ReferenceSite[] }>();
  const SITES_PER_STACK = 12;

  async function fresh(options: { accessTokenTtlSeconds?: number; env?: Record<string, string> } = {}) {
    const key = JSON.stringify(options.env ?? {});
    let pool = pools.get(key);
    if (pool === undefined || pool.free.length === 0) {
      const free = await Promise.all(Array.from({ length: SITES_PER_STACK }, () => sites.start()));
      const pooled = await Stack.start({ worker: false, env: { ...siteEnv(sites, free), ...options.env } });
      started.push(pooled);
      pool = { stack: pooled, free };
      pools.set(key, pool);
    }
    const site = pool.free.shift()!;
    // As the site's own option would at its start (it reads the lifetime when it issues a token).
    site.accessTokenTtlSeconds = options.accessTokenTtlSeconds ?? site.accessTokenTtlSeconds;
    stack = pool.stack;
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
    const done = await completeOAuth(http, callback, user.token);
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

    // Completing again, or with an invented state, is refused and changes nothing.
    const replay = await http.post('/api/oauth/complete', completionBody(callback), { token: user.token });
    expectError(replay, 'VALIDATION_ERROR', 400);
    expect(replay.body.details[0].field).toBe('state');
    expectError(
      await http.post('/api/oauth/complete', { code: 'abc', state: 'x'.repeat(43) }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expectError(await http.get('/api/oauth/callback?code=abc'), 'VALIDATION_ERROR', 400);
    expect(site.stats.codeExchanges).toBe(1);
    expect(site.tokenRequests).toHaveLength(1);
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
    // No completion page: the callback answers the values itself (JSON here).
    const { user, siteId } = await fresh({ env: { OAUTH_COMPLETE_URL: 'none' } });
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const denied = await approveAtSite(sites.ca, start.body.authorizationUrl, undefined, 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    // The error travels through the callback to the completion step like a code does.
    const landed = await http.get(`${denied.pathname}${denied.search}`, { headers: { accept: 'application/json' } });
    expect(landed.status).toBe(200);
    expect(landed.body).toEqual({
      complete: 'POST /api/oauth/complete',
      body: { state: denied.searchParams.get('state'), error: 'access_denied' },
    });
    const res = await completeOAuth(http, denied, user.token);
    expectError(res, 'VALIDATION_ERROR', 400);
    expect(res.body.details).toEqual([{ field: 'error', message: 'the site answered access_denied' }]);
    expectError(
      await http.post('/api/oauth/complete', completionBody(denied), { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: user.token })).body.credential.kind).toBeNull();
  });

  it('A starts, B approves in her browser: B gets PERMISSION_DENIED, the state is spent, the code never redeemed', async () => {
    // No completion page: the callback shows the values on its own page.
    const { site, user: a, siteId } = await fresh({ env: { OAUTH_COMPLETE_URL: 'none' } });
    const b = await registerUser(http);
    const start = await http.post(
      `/api/vault/sites/${siteId}/oauth/start`,
      { tools: ['list_notes'] },
      { token: a.token },
    );
    // A sends the authorization link to B, who approves with her own account at the site.
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl, {
      username: 'root',
      password: 'root-password',
    });
    // B's browser lands on the callback: a page telling the client to complete, nothing redeemed.
    const landed = await http.get(`${callback.pathname}${callback.search}`);
    expect(landed.status).toBe(200);
    expect(landed.headers.get('content-type')).toMatch(/^text\/html/);
    expect(landed.headers.get('cache-control')).toBe('no-store');
    expect(landed.headers.get('referrer-policy')).toBe('no-referrer');
    expect(landed.text).toContain('complete with POST /api/oauth/complete');
    expect(landed.text).toContain(callback.searchParams.get('code'));
    expect(site.tokenRequests).toEqual([]);
    // B's client completes with B's token: refused, and the code never reaches the token endpoint.
    const refused = await http.post('/api/oauth/complete', completionBody(callback), { token: b.token });
    expectError(refused, 'PERMISSION_DENIED', 403);
    expect(site.tokenRequests).toEqual([]);
    // The state is spent: A cannot redeem B's approval either.
    const late = await http.post('/api/oauth/complete', completionBody(callback), { token: a.token });
    expectError(late, 'VALIDATION_ERROR', 400);
    expect(late.body.details[0].field).toBe('state');
    expect(site.tokenRequests).toEqual([]);
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: a.token })).body.credential.kind).toBeNull();
    expect((await http.get('/api/vault/sites', { token: b.token })).body.items).toEqual([]);

    // A approving in A's own browser and completing with A's token connects, with A's site account.
    const again = await http.post(
      `/api/vault/sites/${siteId}/oauth/start`,
      { tools: ['list_notes'] },
      { token: a.token },
    );
    const own = await approveAtSite(sites.ca, again.body.authorizationUrl);
    const done = await completeOAuth(http, own, a.token);
    expect(done.body).toEqual({ siteId, scopes: ['read'], connected: true });
    expect(site.tokenRequests).toEqual([{ grantType: 'authorization_code', code: own.searchParams.get('code') }]);
    site.createNote('alice', 'alice note', '');
    const listed = await http.post(
      `/api/vault/sites/${siteId}/tools/list_notes/call`,
      { input: {} },
      { token: a.token },
    );
    expect(listed.body.result.results.map((n: { owner: string }) => n.owner)).toEqual(['alice']);
  });

  it("an iss that is not the site's issuer is refused at completion: nothing stored, nothing redeemed", async () => {
    const { site, user, siteId } = await fresh();
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    // The response claims to come from another authorization server (a mix-up).
    callback.searchParams.set('iss', 'https://accounts.honest-provider.example');
    const refused = await completeOAuth(http, callback, user.token);
    expectError(refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details[0].field).toBe('iss');
    expect(site.tokenRequests).toEqual([]);
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: user.token })).body.credential.kind).toBeNull();
    // Spent: without the forged iss it is not redeemable either.
    callback.searchParams.delete('iss');
    expectError(await completeOAuth(http, callback, user.token), 'VALIDATION_ERROR', 400);
    expect(site.tokenRequests).toEqual([]);
  });

  it('completion needs a token, accepted terms and a well-formed body; the callback escapes what it shows', async () => {
    // With the redirect turned off, the callback shows the values on its own page.
    const { site, user } = await fresh({ env: { OAUTH_COMPLETE_URL: 'none' } });
    const complete = (body: unknown, token = user.token) => http.post('/api/oauth/complete', body, { token });
    expectError(await http.post('/api/oauth/complete', { code: 'c', state: 's' }), 'UNAUTHORIZED', 401);
    const newcomer = await registerUser(http, { acceptTerms: false });
    expectError(await complete({ code: 'c', state: 's' }, newcomer.token), 'TERMS_NOT_ACCEPTED', 403);
    const bad: Array<[unknown, string]> = [
      [{}, 'state'],
      [{ code: 'c' }, 'state'],
      [{ code: 'c', state: null }, 'state'],
      [{ code: 'c', state: 7 }, 'state'],
      [{ code: 'c', state: ['s'] }, 'state'],
      [{ code: 'c', state: '' }, 'state'],
      [{ code: 'c', state: 's'.repeat(513) }, 'state'],
      [{ state: 's' }, 'code'],
      [{ code: null, state: 's' }, 'code'],
      [{ code: 5, state: 's' }, 'code'],
      [{ code: {}, state: 's' }, 'code'],
      [{ code: 'c'.repeat(4097), state: 's' }, 'code'],
      [{ code: null, state: 's', error: 'access_denied' }, 'code'],
      [{ code: 'c', state: 's', iss: null }, 'iss'],
      [{ code: 'c', state: 's', iss: 1 }, 'iss'],
      [{ code: 'c', state: 's', iss: '' }, 'iss'],
      [{ code: 'c', state: 's', iss: 'i'.repeat(2049) }, 'iss'],
      [{ state: 's', error: null }, 'error'],
      [{ state: 's', error: false }, 'error'],
      [{ state: 's', error: 'bad"error' }, 'error'],
      [{ code: 'c', state: 's', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of bad) {
      const res = await complete(body);
      if (
        res.status !== 400 ||
        res.body.code !== 'VALIDATION_ERROR' ||
        !res.body.details?.some((d: { field: string }) => d.field === field)
      ) {
        throw new Error(`${JSON.stringify(body).slice(0, 80)} answered ${res.status} ${res.text.slice(0, 300)}`);
      }
    }
    expectError(await http.get('/api/oauth/callback?state=a&state=b&code=c'), 'VALIDATION_ERROR', 400);
    expectError(await http.get('/api/oauth/callback?state=s'), 'VALIDATION_ERROR', 400);
    const page = await http.get(`/api/oauth/callback?code=c&state=${encodeURIComponent('"><script>x()</script>')}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('&#60;script&#62;');
    expect(page.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(site.tokenRequests).toEqual([]);
  });

  it("by default the callback sends the browser to the console's completion page, which the service serves", async () => {
    const { site, user, siteId } = await fresh();
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    // Whatever the client accepts: the page exists, so there is nothing to show here.
    for (const accept of ['text/html', 'application/json']) {
      const res = await http.get(`${callback.pathname}${callback.search}`, { headers: { accept }, redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const target = new URL(res.headers.get('location')!);
      expect(target.origin + target.pathname).toBe(`${stack.baseUrl}/oauth/complete`);
      expect(Object.fromEntries(target.searchParams)).toEqual({
        code: callback.searchParams.get('code'),
        state: callback.searchParams.get('state'),
      });
    }
    const page = await http.get('/oauth/complete?code=c&state=s', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.text).toContain('<div id="root">');
    // The site's refusal travels on too, for the page to show.
    const refused = await approveAtSite(sites.ca, start.body.authorizationUrl, undefined, 'deny');
    const res = await http.get(`${refused.pathname}${refused.search}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(Object.fromEntries(new URL(res.headers.get('location')!).searchParams)).toEqual({
      error: 'access_denied',
      state: callback.searchParams.get('state'),
    });
    expect(site.tokenRequests).toEqual([]);
  });

  it('OAUTH_COMPLETE_URL=none: no redirect, the values as JSON or on a small page', async () => {
    const { site, user, siteId } = await fresh({ env: { OAUTH_COMPLETE_URL: 'none' } });
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    const json = await http.get(`${callback.pathname}${callback.search}`, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
    });
    expect(json.status).toBe(200);
    expect(json.body).toEqual({
      complete: 'POST /api/oauth/complete',
      body: { code: callback.searchParams.get('code'), state: callback.searchParams.get('state') },
    });
    const page = await http.get(`${callback.pathname}${callback.search}`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('The site approved the connection');
    const done = await http.post('/api/oauth/complete', json.body.body, { token: user.token });
    expect(done.body).toEqual({ siteId, scopes: ['read', 'write', 'delete', 'admin'], connected: true });
    expect(site.tokenRequests).toHaveLength(1);
  });

  it('OAUTH_COMPLETE_URL: the callback redirects there with code, state and iss; the client completes', async () => {
    const completeUrl = 'https://console.example.com/connect/done?from=agentsite';
    const { site, user, siteId } = await fresh({ env: { OAUTH_COMPLETE_URL: completeUrl } });
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    callback.searchParams.set('iss', site.url);
    const res = await fetch(`${stack.baseUrl}${callback.pathname}${callback.search}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const target = new URL(res.headers.get('location')!);
    expect(target.origin + target.pathname).toBe('https://console.example.com/connect/done');
    expect(Object.fromEntries(target.searchParams)).toEqual({
      from: 'agentsite',
      code: callback.searchParams.get('code'),
      state: callback.searchParams.get('state'),
      iss: site.url,
    });
    expect(site.tokenRequests).toEqual([]);
    const done = await http.post('/api/oauth/complete', completionBody(target), { token: user.token });
    expect(done.body).toEqual({ siteId, scopes: ['read', 'write', 'delete', 'admin'], connected: true });
    expect(site.tokenRequests).toHaveLength(1);
  });

  it('manifests that would send codes or tokens to another domain, or carry unusable URLs, are MANIFEST_INVALID', async () => {
    const { site, user, siteId } = await fresh();
    const good = site.manifest() as any;
    // The site is https://localhost:<port>; 127.0.0.1 is another registrable domain (an IP is its own).
    const elsewhere = `https://127.0.0.1:${site.port}`;
    const cases: Array<[unknown, string[]]> = [
      [
        {
          ...good,
          auth: {
            ...good.auth,
            authorization_url: `${elsewhere}/oauth/authorize`,
            token_url: `${elsewhere}/oauth/token`,
          },
        },
        ['auth.authorization_url', 'auth.token_url'],
      ],
      [{ ...good, server: { url: `${elsewhere}/api` } }, ['server.url']],
      [{ ...good, auth: { ...good.auth, issuer: elsewhere } }, ['auth.issuer']],
      [{ ...good, server: { url: 'https://localhost:99999/api' } }, ['server.url']],
      [{ ...good, auth: { ...good.auth, token_url: 'https://256.256.256.256/oauth/token' } }, ['auth.token_url']],
      [{ ...good, server: { url: `http://localhost:${site.port}/api` } }, ['server.url']],
    ];
    try {
      for (const [json, fields] of cases) {
        site.manifestOverride = { json };
        const res = await http.post('/api/vault/sites', { url: `${site.url}/other` }, { token: user.token });
        expectError(res, 'MANIFEST_INVALID', 422);
        expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(fields);
      }
      // A manifest stored before these rules is held to them when a connection starts...
      site.manifestOverride = undefined;
      const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
      await db.connect();
      try {
        await db.query(`UPDATE sites SET manifest = jsonb_set(manifest, '{server,url}', $2) WHERE id = $1`, [
          siteId,
          JSON.stringify(`${elsewhere}/api`),
        ]);
      } finally {
        await db.end();
      }
      const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
      expectError(start, 'MANIFEST_INVALID', 422);
      expect(start.body.details.map((d: { field: string }) => d.field)).toEqual(['server.url']);
      // ...and when a tool is called, before any credential or token is looked at.
      const call = await http.post(
        `/api/vault/sites/${siteId}/tools/search_notes/call`,
        { input: { query: 'milk' } },
        { token: user.token },
      );
      expectError(call, 'MANIFEST_INVALID', 422);
      expect(call.body.details.map((d: { field: string }) => d.field)).toEqual(['server.url']);
    } finally {
      site.manifestOverride = undefined;
    }
    expect((await http.get('/api/vault/sites', { token: user.token })).body.items).toHaveLength(1);
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

  it("disconnecting revokes the grant at the site's revocation_url (RFC 7009): refresh token, then access token", async () => {
    const { site, user, siteId } = await fresh();
    await connect(site, user, siteId);
    const call = () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token });
    expect((await call()).status).toBe(200);
    const [access] = site.oauthAccessTokens();
    expect((await http.delete(`/api/vault/sites/${siteId}/token`, { token: user.token })).status).toBe(204);
    await eventually('both tokens revoked', async () => (site.revocations.length === 2 ? true : undefined));
    expect(site.revocations).toEqual([
      { hint: 'refresh_token', known: true },
      { hint: 'access_token', known: true },
    ]);
    // The grant is over at the site: its last access token no longer opens anything.
    expect(access!.revoked).toBe(true);
  });

  it('deleting a site revokes its grant too, and a revocation endpoint that fails does not stop the deletion', async () => {
    const { site, user, siteId } = await fresh();
    await connect(site, user, siteId);
    site.failRevocations = true;
    expect((await http.delete(`/api/vault/sites/${siteId}`, { token: user.token })).status).toBe(204);
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: user.token })).status).toBe(404);
    await eventually('both revocations attempted', async () => (site.revocations.length === 2 ? true : undefined));
    expect(site.revocations.map((r) => [r.hint, r.failed])).toEqual([
      ['refresh_token', true],
      ['access_token', true],
    ]);
    // Not revoked at the site (its endpoint failed): the grant's token still stands there.
    expect(site.oauthAccessTokens()[0]!.revoked).toBe(false);
  });

  it('vault:rotate re-encrypts every entry under the new key; the old key can then be dropped', async () => {
    // A database of its own: rotation rewrites every entry, and other suites share the main one.
    const databaseUrl = await isolatedDatabase();
    const { site, user, siteId } = await fresh({ env: { DATABASE_URL: databaseUrl } });
    await connect(site, user, siteId);
    // An agent's notification signing secret is sealed with the vault key too.
    const agent = await http.post(
      '/api/agents',
      {
        name: 'notifies',
        systemPrompt: 'p',
        siteIds: [],
        trigger: { type: 'manual' },
        notify: { url: `${site.url}/hook`, events: ['run_completed'] },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    const notifySecret = agent.body.notifySecret as string;
    expect(notifySecret).toMatch(/^whsec_/);
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
    expect(output).toMatch(/agents: re-encrypted 1 of 1 entries under key "t2"/);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const stored = (await db.query('SELECT notify_secret FROM agents WHERE id = $1', [agent.body.id])).rows[0]
        .notify_secret as string;
      expect(stored.startsWith('t2:')).toBe(true);
      // Opens under the new key alone, to the secret the user was shown.
      const cipher = new VaultCipher({ vaultKeys: [{ id: 't2', key: Buffer.alloc(32, 7) }] } as unknown as Settings);
      expect(openNotifySecret(cipher, agent.body.id as string, stored)).toBe(notifySecret);
    } finally {
      await db.end();
    }
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

describe('OAuth against a third-party authorization server: oidc-provider (e2e)', () => {
  let sites: TestSites;
  let op: OidcProviderSite;
  let stack: Stack;
  let http: Http;

  beforeAll(async () => {
    sites = await testSites();
    op = await OidcProviderSite.start(sites.ca);
    stack = await Stack.start({
      worker: false,
      env: { SITE_CA_CERTS: sites.caFile, SITE_ALLOW_PRIVATE_HOSTS: `localhost:${op.port}` },
    });
    http = new Http(stack.baseUrl);
    op.allowRedirect(`${stack.baseUrl}/api/oauth/callback`);
  });

  afterAll(async () => {
    await stack?.stop();
    await op?.stop();
    await sites?.stopAll();
  });

  it('connects end to end (PKCE S256, iss checked) and the token calls a tool; the A/B attack is refused', async () => {
    const a = await registerUser(http);
    const b = await registerUser(http);
    const added = await http.post('/api/vault/sites', { url: op.url }, { token: a.token });
    expect(added.status).toBe(201);
    expect(added.body.auth).toEqual({ type: 'oauth2', scopes: ['read', 'write'] });
    const siteId = added.body.id as string;
    const start = () =>
      http.post(`/api/vault/sites/${siteId}/oauth/start`, { tools: ['get_profile'] }, { token: a.token });

    // The attack first: A's link, approved by B (as "bob" at the provider), completed by B's client.
    const lured = await start();
    expect(new URL(lured.body.authorizationUrl).origin).toBe(op.url);
    const bobs = await approveAtOidcProvider(sites.ca, lured.body.authorizationUrl, 'bob');
    expect(bobs.searchParams.get('iss')).toBe(op.issuer);
    expect(bobs.searchParams.get('code')).toBeTruthy();
    expectError(await completeOAuth(http, bobs, b.token), 'PERMISSION_DENIED', 403);
    expectError(
      await http.post('/api/oauth/complete', completionBody(bobs), { token: a.token }),
      'VALIDATION_ERROR',
      400,
    );
    expect(op.tokenRequests).toEqual([]);
    expect((await http.get(`/api/vault/sites/${siteId}`, { token: a.token })).body.credential.kind).toBeNull();

    // A forged iss is refused before the code is redeemed.
    const forged = await approveAtOidcProvider(sites.ca, (await start()).body.authorizationUrl, 'alice');
    forged.searchParams.set('iss', `https://127.0.0.1:${op.port}`);
    const refused = await completeOAuth(http, forged, a.token);
    expectError(refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details[0].field).toBe('iss');
    expect(op.tokenRequests).toEqual([]);

    // A denial at the provider flows through the completion step.
    const denied = await approveAtOidcProvider(sites.ca, (await start()).body.authorizationUrl, 'alice', 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    const deniedAnswer = await completeOAuth(http, denied, a.token);
    expectError(deniedAnswer, 'VALIDATION_ERROR', 400);
    expect(deniedAnswer.body.details[0].field).toBe('error');

    // A's own approval, completed with A's token: connected with alice's grant, and the token works.
    const own = await approveAtOidcProvider(sites.ca, (await start()).body.authorizationUrl, 'alice');
    const done = await completeOAuth(http, own, a.token);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ siteId, scopes: ['read'], connected: true });
    expect(op.tokenRequests).toEqual(['POST /token']);
    const described = await http.get(`/api/vault/sites/${siteId}`, { token: a.token });
    expect(described.body.credential).toMatchObject({ kind: 'oauth2', status: 'active', scopes: ['read'] });
    const call = await http.post(
      `/api/vault/sites/${siteId}/tools/get_profile/call`,
      { input: {} },
      { token: a.token },
    );
    expect(call.status).toBe(200);
    expect(call.body.result).toEqual({ accountId: 'alice' });
    expect(op.toolCalls).toEqual([{ accountId: 'alice', scope: 'read' }]);
  });
});
