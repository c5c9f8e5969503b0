import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { issueServerCert } from '../../examples/site/tls.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import { expectError, Http } from '../utils/http.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function withDb<T>(url: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

/** Redirects, the outgoing budget, and the vault's additional data: what a site call may and may not do. */
describe('site calls: redirects, outgoing budget, vault binding (e2e)', () => {
  let sites: TestSites;
  const stacks: Stack[] = [];
  const servers: https.Server[] = [];

  beforeAll(async () => {
    sites = await testSites();
  });

  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await sites?.stopAll();
  });

  async function serve(
    handler: (
      req: IncomingMessage,
      body: string,
    ) => { status: number; headers?: Record<string, string>; body?: string },
  ) {
    const cert = await issueServerCert(sites.ca);
    const server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const answer = handler(req, body);
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    const port = (server.address() as { port: number }).port;
    return { url: `https://localhost:${port}`, host: `localhost:${port}` };
  }

  async function stackFor(allowed: ReferenceSite[], extraHosts: string[] = [], env: Record<string, string> = {}) {
    const base = siteEnv(sites, allowed);
    const stack = await Stack.start({
      worker: false,
      env: {
        ...base,
        SITE_ALLOW_PRIVATE_HOSTS: [base.SITE_ALLOW_PRIVATE_HOSTS, ...extraHosts].filter(Boolean).join(','),
        ...env,
      },
    });
    stacks.push(stack);
    return { stack, http: new Http(stack.baseUrl) };
  }

  async function siteWithToken(http: Http, user: TestUser, site: ReferenceSite, path = '') {
    const added = await http.post('/api/vault/sites', { url: `${site.url}${path}` }, { token: user.token });
    expect(added.status).toBe(201);
    const stored = await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice', ['read']).token },
      { token: user.token },
    );
    expect(stored.status).toBe(201);
    return added.body.id as string;
  }

  it('a tool call redirected to another origin is not followed: TOOL_EXECUTION_ERROR naming it, the other origin gets nothing', async () => {
    const received: Received[] = [];
    const elsewhere = await serve((req, body) => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      return { status: 200, body: '{"stolen":true}' };
    });
    // A site with an open redirect on its tool endpoint (a 307 keeps method, body and, if followed, the token).
    const reference = await sites.start();
    const served: { manifest?: unknown } = {};
    const redirector = await serve((req) => {
      if (req.url === '/.well-known/agentsite.json') {
        return { status: 200, body: JSON.stringify(served.manifest) };
      }
      return { status: 307, headers: { location: `${elsewhere.url}/collect${req.url ?? ''}` } };
    });
    served.manifest = {
      ...reference.manifest(),
      server: { url: `${redirector.url}/api` },
      auth: { type: 'bearer' },
    };
    const { http } = await stackFor([], [redirector.host, elsewhere.host]);
    const user = await registerUser(http);
    const added = await http.post('/api/vault/sites', { url: redirector.url }, { token: user.token });
    expect(added.status).toBe(201);
    await http.post(`/api/vault/sites/${added.body.id}/token`, { token: 'the-users-token' }, { token: user.token });
    const call = await http.post(
      `/api/vault/sites/${added.body.id}/tools/create_note/call`,
      { input: { title: 'secret title', body: 'secret body' } },
      { token: user.token },
    );
    expectError(call, 'TOOL_EXECUTION_ERROR', 502);
    expect(call.body.error).toContain('redirected the request (307) to another origin');
    expect(call.body.error).toContain(elsewhere.url);
    expect(received).toEqual([]);
  });

  it('calls that fail validation or have no usable credential take no outgoing slot; one vault gets only its share', async () => {
    const site = await sites.start();
    const { http } = await stackFor([site], [], {
      OUTGOING_CALLS_PER_MINUTE: '3',
      OUTGOING_CALLS_PER_MINUTE_PER_USER: '2',
    });
    const owner = await registerUser(http);
    const siteId = await siteWithToken(http, owner, site);
    const noToken = await registerUser(http);
    const bare = (await http.post('/api/vault/sites', { url: site.url }, { token: noToken.token })).body.id as string;
    const call = (user: TestUser, id: string, input: unknown = {}) =>
      http.post(`/api/vault/sites/${id}/tools/list_notes/call`, { input }, { token: user.token });

    for (let i = 0; i < 5; i += 1) {
      expectError(await call(noToken, bare), 'TOOL_EXECUTION_ERROR', 502); // no credential
      expectError(
        await http.post(
          `/api/vault/sites/${siteId}/tools/search_notes/call`,
          { input: { query: 5 } },
          { token: owner.token },
        ),
        'VALIDATION_ERROR',
        400,
      );
    }
    expect(site.stats.toolCalls).toBe(0);
    // Ten refused calls later, the domain's budget (3) is whole: the owner's share (2) goes through.
    expect((await call(owner, siteId)).status).toBe(200);
    expect((await call(owner, siteId)).status).toBe(200);
    const overShare = await call(owner, siteId);
    expectError(overShare, 'OUTGOING_RATE_LIMITED', 429);
    // The owner's refused call spent nothing of the domain: another user still gets the third slot.
    const other = await registerUser(http);
    const otherSite = await siteWithToken(http, other, site, '/other');
    expect((await call(other, otherSite)).status).toBe(200);
    expectError(await call(other, otherSite), 'OUTGOING_RATE_LIMITED', 429); // the domain's 3 are spent
    expect(site.stats.toolCalls).toBe(3);
  });

  it('a credential the site keeps refusing (401/403) is held after three calls: not sent, no slot spent, until replaced', async () => {
    const site = await sites.start();
    const { http } = await stackFor([site], [], {
      OUTGOING_CALLS_PER_MINUTE: '5',
      OUTGOING_CALLS_PER_MINUTE_PER_USER: '5',
    });
    const junk = await registerUser(http);
    const junkSite = await siteWithToken(http, junk, site);
    const call = (user: TestUser, id: string) =>
      http.post(`/api/vault/sites/${id}/tools/list_notes/call`, { input: {} }, { token: user.token });

    // The site refuses the stored token three times in a row (as it would a junk or revoked one).
    for (const status of [401, 403, 401]) {
      site.failures.push({ tool: 'list_notes', status, rawBody: JSON.stringify({ error: 'token revoked' }) });
      const refused = await call(junk, junkSite);
      expectError(refused, 'TOOL_EXECUTION_ERROR', 502);
      expect(refused.body.error).toContain(`(${status})`);
    }
    expect(site.stats.toolCalls).toBe(3);
    for (let i = 0; i < 5; i += 1) {
      const held = await call(junk, junkSite);
      expectError(held, 'TOOL_EXECUTION_ERROR', 502);
      expect(held.body.error).toMatch(/refused the stored credential on its last 3 calls .*not sent again/);
    }
    expect(site.stats.toolCalls).toBe(3);
    // The five held calls spent nothing of the domain's 5: another user's call still goes through.
    const other = await registerUser(http);
    const otherSite = await siteWithToken(http, other, site, '/other');
    expect((await call(other, otherSite)).status).toBe(200);
    expect(site.stats.toolCalls).toBe(4);

    // A new token is a new credential: it is sent again, and takes the domain's fifth slot.
    const replaced = await http.patch(
      `/api/vault/sites/${junkSite}/token`,
      { token: site.issueApiToken('alice', ['read']).token },
      { token: junk.token },
    );
    expect(replaced.status).toBe(200);
    expect((await call(junk, junkSite)).status).toBe(200);
    expect(site.stats.toolCalls).toBe(5);
  });

  it('a credential row moved to another site no longer opens: a clean TOOL_EXECUTION_ERROR, no 500', async () => {
    const site = await sites.start();
    const { http, stack } = await stackFor([site]);
    const user = await registerUser(http);
    const a = await siteWithToken(http, user, site, '/moved-a');
    const b = (await http.post('/api/vault/sites', { url: `${site.url}/moved-b` }, { token: user.token })).body.id;
    expect(
      (await http.post(`/api/vault/sites/${a}/tools/list_notes/call`, { input: {} }, { token: user.token })).status,
    ).toBe(200);
    await withDb(stack.env.DATABASE_URL!, (db) =>
      db.query(`UPDATE site_credentials SET site_id = $2 WHERE site_id = $1`, [a, b]),
    );
    const moved = await http.post(`/api/vault/sites/${b}/tools/list_notes/call`, { input: {} }, { token: user.token });
    expectError(moved, 'TOOL_EXECUTION_ERROR', 502);
    expect(moved.body.error).toContain('cannot be decrypted');
    expect(site.stats.toolCalls).toBe(1);
  });
});
