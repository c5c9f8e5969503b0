import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { ReferenceSite } from '../../examples/site/site.js';
import { testEnv } from '../setup/shared-runtime.js';
import { expectError, Http } from '../utils/http.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';

describe('vault: sites, manifests, bearer tokens and tool calls (e2e)', () => {
  let sites: TestSites;
  let site: ReferenceSite;
  let other: ReferenceSite;
  // Each test that calls tools has a site of its own: the outgoing limit (10 a minute) is per domain.
  let classifySite: ReferenceSite;
  let tamperSite: ReferenceSite;
  let closed: net.Server;
  let closedPort: number;
  let closedConnections = 0;
  let stack: Stack;
  let http: Http;
  const rawTokens: string[] = [];

  beforeAll(async () => {
    sites = await testSites();
    site = await sites.start();
    other = await sites.start();
    classifySite = await sites.start();
    tamperSite = await sites.start();
    // A local listener that must never see a connection: the target of every SSRF attempt.
    closed = net.createServer((socket) => {
      closedConnections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedPort = (closed.address() as net.AddressInfo).port;
    stack = await Stack.start({
      worker: false,
      // One user may use the domain's whole budget here: the specification's "10 a minute per domain".
      env: { ...siteEnv(sites, [site, other, classifySite, tamperSite]), OUTGOING_CALLS_PER_MINUTE_PER_USER: '10' },
    });
    http = new Http(stack.baseUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await sites?.stopAll();
    closed?.close();
  });

  async function addSite(user: TestUser, url = site.url) {
    return http.post('/api/vault/sites', { url }, { token: user.token });
  }

  it('adds a site: the manifest is fetched over HTTPS, validated, and its tools get derived scopes', async () => {
    const user = await registerUser(http);
    const added = await addSite(user);
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      url: site.url,
      name: 'Reference Notebook',
      version: '1.0.0',
      serverUrl: `${site.url}/api`,
      auth: { type: 'oauth2', scopes: ['read', 'write', 'delete', 'admin'] },
      credential: { kind: null },
    });
    const scopes = Object.fromEntries(added.body.tools.map((t: { name: string; scope: string }) => [t.name, t.scope]));
    expect(scopes).toEqual({
      search_notes: 'read',
      list_notes: 'read',
      get_note: 'read',
      create_note: 'write',
      update_note: 'write',
      delete_note: 'delete',
      manage_users: 'admin',
    });
    const fetchedAt = Date.parse(added.body.manifestFetchedAt);
    expect(Date.now() - fetchedAt).toBeLessThan(60_000);

    const listed = await http.get('/api/vault/sites', { token: user.token });
    expect(listed.body.items.map((s: { id: string }) => s.id)).toEqual([added.body.id]);
    expect(listed.body.nextCursor).toBeNull();
    expect((await http.get(`/api/vault/sites/${added.body.id}`, { token: user.token })).body.id).toBe(added.body.id);

    const dup = await addSite(user, `${site.url}/`);
    expectError(dup, 'VALIDATION_ERROR', 400);
    expect(dup.body.details[0].field).toBe('url');

    const refreshed = await http.post(`/api/vault/sites/${added.body.id}/manifest/refresh`, undefined, {
      token: user.token,
    });
    expect(refreshed.status).toBe(200);
    expect(Date.parse(refreshed.body.manifestFetchedAt)).toBeGreaterThanOrEqual(fetchedAt);

    // Another user sees none of it.
    const stranger = await registerUser(http);
    expectError(await http.get(`/api/vault/sites/${added.body.id}`, { token: stranger.token }), 'NOT_FOUND', 404);
    expect((await http.get('/api/vault/sites', { token: stranger.token })).body.items).toEqual([]);

    expect((await http.delete(`/api/vault/sites/${added.body.id}`, { token: user.token })).status).toBe(204);
    expectError(await http.get(`/api/vault/sites/${added.body.id}`, { token: user.token }), 'NOT_FOUND', 404);
  });

  it('answers MANIFEST_NOT_FOUND and MANIFEST_INVALID (with each bad field named)', async () => {
    const user = await registerUser(http);
    try {
      site.manifestOverride = { status: 404 };
      expectError(await addSite(user), 'MANIFEST_NOT_FOUND', 404);
      site.manifestOverride = { raw: '<html>not json</html>' };
      expectError(await addSite(user), 'MANIFEST_NOT_FOUND', 404);
      site.manifestOverride = { status: 500 };
      expectError(await addSite(user), 'MANIFEST_NOT_FOUND', 404);

      site.manifestOverride = { json: { name: 'X', version: '1', auth: { type: 'magic' }, tools: [] } };
      const invalid = await addSite(user);
      expectError(invalid, 'MANIFEST_INVALID', 422);
      const fields = invalid.body.details.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['description', 'server', 'auth.type', 'tools']));

      const good = site.manifest() as any;
      site.manifestOverride = {
        json: {
          ...good,
          server: { url: 'http://plain.example/api' },
          auth: { type: 'oauth2', authorization_url: good.auth.authorization_url, scopes: ['read', 'root'] },
          tools: [
            { ...good.tools[0], name: 'bad/name' },
            { ...good.tools[1], input_schema: { type: 'array', properties: {} } },
            { ...good.tools[2], input_schema: { ...good.tools[2].input_schema, required: ['nope'] } },
            { name: 'no_schema', description: 'x' },
          ],
        },
      };
      const detailed = await addSite(user);
      expectError(detailed, 'MANIFEST_INVALID', 422);
      expect(detailed.body.details.map((d: { field: string }) => d.field)).toEqual(
        expect.arrayContaining([
          'server.url',
          'auth.token_url',
          'auth.scopes[1]',
          'tools[0].name',
          'tools[1].input_schema.type',
          'tools[3].input_schema',
        ]),
      );
      site.manifestOverride = {
        json: {
          ...good,
          tools: [
            good.tools[0],
            { ...good.tools[2], input_schema: { ...good.tools[2].input_schema, required: ['nope'] } },
            good.tools[0],
          ],
        },
      };
      const semantic = await addSite(user);
      expectError(semantic, 'MANIFEST_INVALID', 422);
      expect(semantic.body.details.map((d: { field: string }) => d.field)).toEqual([
        'tools[1].input_schema.required[0]',
        'tools[2].name',
      ]);
    } finally {
      site.manifestOverride = undefined;
    }
    // Nothing was added by any failure.
    expect((await http.get('/api/vault/sites', { token: user.token })).body.items).toEqual([]);
  });

  it('refuses non-https and non-public addresses in every notation with INVALID_URL, connecting nowhere', async () => {
    const user = await registerUser(http);
    const p = closedPort;
    const urls = [
      `http://localhost:${site.port}`,
      'ftp://example.com',
      'not a url',
      `https://127.0.0.1:${p}`,
      `https://[::1]:${p}`,
      `https://2130706433:${p}`,
      `https://0x7f000001:${p}`,
      `https://0177.0.0.1:${p}`,
      `https://127.1:${p}`,
      `https://[::ffff:127.0.0.1]:${p}`,
      `https://[::ffff:7f00:1]:${p}`,
      'https://10.0.0.1',
      'https://192.168.1.20',
      'https://172.16.5.4',
      'https://169.254.169.254',
      'https://100.64.0.1',
      'https://0.0.0.0',
      'https://[fd00::1]',
      'https://[fe80::1]',
      `https://user:pass@localhost:${site.port}`,
      // A DNS name that resolves to loopback, on a port that is not allow-listed: refused at connect.
      `https://localhost:${p}`,
    ];
    for (const url of urls) {
      const res = await addSite(user, url);
      if (res.status !== 400 || res.body.code !== 'INVALID_URL') {
        throw new Error(`${url} answered ${res.status} ${res.text}`);
      }
    }
    // An allow-listed site that redirects to a private address: the hop is checked and refused.
    site.manifestOverride = { redirectTo: `https://127.0.0.1:${p}/.well-known/agentsite.json` };
    try {
      expectError(await addSite(user), 'INVALID_URL', 400);
    } finally {
      site.manifestOverride = undefined;
    }
    expect(closedConnections).toBe(0);
  });

  it('bearer tokens: store (TOKEN_EXISTS twice), call a tool with them, replace, delete; only hints come back', async () => {
    const user = await registerUser(http);
    const added = (await addSite(user)).body;
    const token = site.issueApiToken('alice', ['read', 'write']).token;
    rawTokens.push(token);
    const stored = await http.post(
      `/api/vault/sites/${added.id}/token`,
      { token, expiresAt: '2099-01-01T00:00:00Z' },
      { token: user.token },
    );
    expect(stored.status).toBe(201);
    expect(stored.body).toEqual({ tokenHint: `…${token.slice(-4)}`, expiresAt: '2099-01-01T00:00:00.000Z' });
    expectError(
      await http.post(`/api/vault/sites/${added.id}/token`, { token }, { token: user.token }),
      'TOKEN_EXISTS',
      409,
    );

    const described = await http.get(`/api/vault/sites/${added.id}`, { token: user.token });
    expect(described.body.credential).toMatchObject({
      kind: 'bearer',
      tokenHint: `…${token.slice(-4)}`,
      status: 'active',
    });
    expect(described.text).not.toContain(token);

    const created = await http.post(
      `/api/vault/sites/${added.id}/tools/create_note/call`,
      { input: { title: 'Groceries', body: 'milk and eggs' } },
      { token: user.token },
    );
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({ title: 'Groceries', owner: 'alice' });
    expect(typeof created.body.durationMs).toBe('number');
    expect(site.lastToolRequest?.headers.authorization).toBe(`Bearer ${token}`);
    expect(site.lastToolRequest?.headers['content-type']).toBe('application/json');
    expect(site.lastToolRequest?.headers['user-agent']).toMatch(/^agentsite\/\d+\.\d+\.\d+/);

    const found = await http.post(
      `/api/vault/sites/${added.id}/tools/search_notes/call`,
      { input: { query: 'milk' } },
      { token: user.token },
    );
    expect(found.body.result.results.map((n: { title: string }) => n.title)).toContain('Groceries');

    const replacement = site.issueApiToken('alice', ['read']).token;
    rawTokens.push(replacement);
    const patched = await http.patch(
      `/api/vault/sites/${added.id}/token`,
      { token: replacement },
      { token: user.token },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ tokenHint: `…${replacement.slice(-4)}`, expiresAt: null });
    // The read-only replacement is what is sent now: the site refuses a write with 403.
    const denied = await http.post(
      `/api/vault/sites/${added.id}/tools/create_note/call`,
      { input: { title: 'x' } },
      { token: user.token },
    );
    expectError(denied, 'TOOL_EXECUTION_ERROR', 502);
    expect(denied.body.error).toContain('lacks the "write" scope');

    expect((await http.delete(`/api/vault/sites/${added.id}/token`, { token: user.token })).status).toBe(204);
    expectError(await http.delete(`/api/vault/sites/${added.id}/token`, { token: user.token }), 'NOT_FOUND', 404);
    expectError(
      await http.patch(`/api/vault/sites/${added.id}/token`, { token }, { token: user.token }),
      'NOT_FOUND',
      404,
    );
    const without = await http.post(
      `/api/vault/sites/${added.id}/tools/list_notes/call`,
      { input: {} },
      { token: user.token },
    );
    expectError(without, 'TOOL_EXECUTION_ERROR', 502);
    expect(without.body.error).toBe('Reference Notebook is not connected: store a token or connect it');
    expectError(
      await http.post(
        `/api/vault/sites/${added.id}/token`,
        { token, expiresAt: '2001-01-01T00:00:00Z' },
        { token: user.token },
      ),
      'VALIDATION_ERROR',
      400,
    );
  });

  it('classifies tool answers: bad input, unknown tool, 401, 429 with Retry-After, 5xx and non-JSON', async () => {
    const user = await registerUser(http);
    const site = classifySite;
    const added = (await addSite(user, site.url)).body;
    const token = site.issueApiToken('alice', ['read']).token;
    rawTokens.push(token);
    await http.post(`/api/vault/sites/${added.id}/token`, { token }, { token: user.token });
    const call = (tool: string, input: unknown) =>
      http.post(`/api/vault/sites/${added.id}/tools/${tool}/call`, { input }, { token: user.token });

    const bad = await call('search_notes', { query: 5, limit: 'ten' });
    expectError(bad, 'VALIDATION_ERROR', 400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['input.limit', 'input.query']);
    const missing = await call('search_notes', {});
    expect(missing.body.details).toEqual([{ field: 'input.query', message: 'is required' }]);
    expectError(await call('no_such_tool', {}), 'NOT_FOUND', 404);

    site.failures.push({ tool: 'list_notes', status: 429, retryAfterSeconds: 7 });
    const limited = await call('list_notes', {});
    expectError(limited, 'OUTGOING_RATE_LIMITED', 429);
    expect(limited.headers.get('retry-after')).toBe('7');
    // The 300 s cap is for runs' durable waits: a direct call hands the site's wait on, however long.
    site.failures.push({ tool: 'list_notes', status: 429, retryAfterSeconds: 100_000 });
    const longWait = await call('list_notes', {});
    expectError(longWait, 'OUTGOING_RATE_LIMITED', 429);
    expect(longWait.headers.get('retry-after')).toBe('100000');

    site.failures.push({ tool: 'list_notes', status: 503, rawBody: JSON.stringify({ error: 'maintenance window' }) });
    const down = await call('list_notes', {});
    expectError(down, 'TOOL_EXECUTION_ERROR', 502);
    expect(down.body.error).toContain('maintenance window');

    site.failures.push({ tool: 'list_notes', status: 200, rawBody: '{"truncated": ' });
    expectError(await call('list_notes', {}), 'TOOL_EXECUTION_ERROR', 502);

    site.failures.push({ tool: 'list_notes', status: 401, rawBody: JSON.stringify({ error: 'token revoked' }) });
    const unauthorized = await call('list_notes', {});
    expectError(unauthorized, 'TOOL_EXECUTION_ERROR', 502);
    expect(unauthorized.body.error).toContain('token revoked');
  });

  it('allows 10 tool calls a minute to one site domain; the 11th is OUTGOING_RATE_LIMITED while another domain works', async () => {
    const user = await registerUser(http);
    const first = (await addSite(user, other.url)).body;
    const token = other.issueApiToken('alice', ['read']).token;
    rawTokens.push(token);
    await http.post(`/api/vault/sites/${first.id}/token`, { token }, { token: user.token });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      statuses.push(
        (await http.post(`/api/vault/sites/${first.id}/tools/list_notes/call`, { input: {} }, { token: user.token }))
          .status,
      );
    }
    expect(statuses).toEqual(Array(10).fill(200));
    const eleventh = await http.post(
      `/api/vault/sites/${first.id}/tools/list_notes/call`,
      { input: {} },
      { token: user.token },
    );
    expectError(eleventh, 'OUTGOING_RATE_LIMITED', 429);
    expect(eleventh.headers.get('retry-after')).toBe('60');
    expect(other.stats.toolCalls).toBe(10);

    // A fresh reference site on another port is another domain: its counter is its own.
    const third = await sites.start();
    const stack2 = await Stack.start({ worker: false, env: siteEnv(sites, [third]) });
    try {
      const http2 = new Http(stack2.baseUrl);
      const user2 = await registerUser(http2);
      const added = (await http2.post('/api/vault/sites', { url: third.url }, { token: user2.token })).body;
      const token2 = third.issueApiToken('alice', ['read']).token;
      rawTokens.push(token2);
      await http2.post(`/api/vault/sites/${added.id}/token`, { token: token2 }, { token: user2.token });
      expect(
        (await http2.post(`/api/vault/sites/${added.id}/tools/list_notes/call`, { input: {} }, { token: user2.token }))
          .status,
      ).toBe(200);
    } finally {
      await stack2.stop();
    }
  });

  it('VAULT_LIMIT_REACHED past the tier limit (free: 3 sites)', async () => {
    const user = await registerUser(http);
    for (const suffix of ['/a', '/b', '/c']) {
      expect((await addSite(user, `${site.url}${suffix}`)).status).toBe(201);
    }
    expectError(await addSite(user, `${site.url}/d`), 'VAULT_LIMIT_REACHED', 403);
  });

  it('refuses a tampered or transplanted ciphertext', async () => {
    const user = await registerUser(http);
    const site = tamperSite;
    const a = (await addSite(user, `${site.url}/tamper-a`)).body;
    const b = (await addSite(user, `${site.url}/tamper-b`)).body;
    for (const id of [a.id, b.id]) {
      const token = site.issueApiToken('alice', ['read']).token;
      rawTokens.push(token);
      await http.post(`/api/vault/sites/${id}/token`, { token }, { token: user.token });
    }
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      // Flip one byte of A's ciphertext.
      await db.query(
        `UPDATE site_credentials SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE site_id = $1`,
        [a.id],
      );
      const tampered = await http.post(
        `/api/vault/sites/${a.id}/tools/list_notes/call`,
        { input: {} },
        { token: user.token },
      );
      expectError(tampered, 'TOOL_EXECUTION_ERROR', 502);
      expect(tampered.body.error).toContain('cannot be decrypted');
      // Copy B's sealed secret onto A's row: bound to B's id, it does not open as A.
      await db.query(
        `UPDATE site_credentials AS t SET key_id = s.key_id, iv = s.iv, ciphertext = s.ciphertext, auth_tag = s.auth_tag
           FROM site_credentials AS s WHERE t.site_id = $1 AND s.site_id = $2`,
        [a.id, b.id],
      );
      expectError(
        await http.post(`/api/vault/sites/${a.id}/tools/list_notes/call`, { input: {} }, { token: user.token }),
        'TOOL_EXECUTION_ERROR',
        502,
      );
      expect(
        (await http.post(`/api/vault/sites/${b.id}/tools/list_notes/call`, { input: {} }, { token: user.token }))
          .status,
      ).toBe(200);
    } finally {
      await db.end();
    }
  });

  it('keeps raw tokens out of the database and the logs', async () => {
    expect(rawTokens.length).toBeGreaterThan(3);
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      const tables = await db.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
      let dump = '';
      for (const { tablename } of tables.rows as Array<{ tablename: string }>) {
        const rows = await db.query(`SELECT row_to_json(t)::text AS j FROM "${tablename}" t`);
        dump += rows.rows.map((r: { j: string }) => r.j).join('\n');
      }
      expect(dump.length).toBeGreaterThan(1000);
      for (const token of rawTokens) {
        expect(dump).not.toContain(token);
      }
    } finally {
      await db.end();
    }
    const logs = stack.logs();
    expect(logs.length).toBeGreaterThan(100);
    for (const token of rawTokens) {
      expect(logs).not.toContain(token);
    }
  });
});
