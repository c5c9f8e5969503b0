import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { listenerApplicationName } from '../../src/common/cache/invalidation-bus.js';
import { callerHeaders, modernClient, rawPost } from '../fixtures/mcp-server/clients.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerAdmin } from '../utils/admin.js';
import { Cluster } from '../utils/cluster.js';
import type { Http } from '../utils/http.js';
import { eventually } from '../utils/runs.js';
import { registerUser, TEST_PASSWORD, type TestUser } from '../utils/users.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';

/** Issue #17: a change made through one API process takes effect in every other one within this. */
const PROPAGATION_BOUND_MS = 100;
/** Between two reads of process B while waiting for it to see a change. */
const POLL_EVERY_MS = 2;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('caches: a change in one API process reaches the caches of another (e2e)', () => {
  let cluster: Cluster;
  let a: Http;
  let b: Http;
  let admin: TestUser;
  let db: pg.Client;
  let sites: TestSites;
  let site: ReferenceSite;
  const figures: string[] = [];

  beforeAll(async () => {
    // Entries live an hour: only the invalidation can make B see a change within the bound.
    sites = await testSites();
    site = await sites.start({ limitPerToken: 1_000_000, limitPerIp: 1_000_000 });
    cluster = await Cluster.start({
      apis: 2,
      workers: 0,
      // The polls below call the site's tool hundreds of times a minute.
      env: {
        CACHE_TTL_SECONDS: '3600',
        OUTGOING_CALLS_PER_MINUTE: '1000000',
        // B's /mcp, reached with the user's API token, lists the vault's sites from its cache.
        MCP_ALLOW_API_TOKENS: 'true',
        ...siteEnv(sites, [site]),
      },
    });
    a = cluster.api(0).http;
    b = cluster.api(1).http;
    admin = await registerAdmin(a, cluster.stack);
    db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    console.log(`cache invalidation across processes (A's answer to B's first changed answer):\n${figures.join('\n')}`);
    await db?.end();
    await cluster?.stop();
    await sites?.stopAll();
  });

  async function login(user: TestUser): Promise<string> {
    const res = await a.post('/api/auth/login', { email: user.email, password: TEST_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.accessToken as string;
  }

  /** A change nobody is told of: triggers do not fire for a session in replica mode. */
  async function unnotified(sql: string, params: unknown[]): Promise<void> {
    await db.query("SET session_replication_role = 'replica'");
    try {
      await db.query(sql, params);
    } finally {
      await db.query("SET session_replication_role = 'origin'");
    }
  }

  /** Reads /api/me on B twice: the first fills B's caches, the second is served from them. */
  async function warm(token: string): Promise<Record<string, unknown>> {
    expect((await b.get('/api/me', { token })).status).toBe(200);
    const me = await b.get('/api/me', { token });
    expect(me.status).toBe(200);
    return me.body as Record<string, unknown>;
  }

  /**
   * Runs `change` on A, then reads B every few ms until `seen`. Answers when, after A's answer, the
   * last read of B that still showed the old state began (0 when the first read saw the change): every
   * read that began later saw the change. That is what "takes effect within the bound" means for a
   * caller, and it does not count how long B took to answer a read (a tool call's round trip, long on
   * a loaded machine); without the invalidation B answers the old state for CACHE_TTL_SECONDS.
   */
  async function propagation(what: string, change: () => Promise<void>, seen: () => Promise<boolean>): Promise<number> {
    await change();
    const start = performance.now();
    let polls = 0;
    let lastStale = 0;
    for (;;) {
      polls += 1;
      const readStart = performance.now() - start;
      if (await seen()) {
        const ms = performance.now() - start;
        figures.push(
          `  ${what}: last stale read began at ${lastStale.toFixed(1)} ms; the first changed answer came at ${ms.toFixed(1)} ms (${polls} reads of B)`,
        );
        return lastStale;
      }
      lastStale = readStart;
      if (performance.now() - start > 10_000) {
        throw new Error(`${what}: B still answers the old state after 10 s`);
      }
      await pause(POLL_EVERY_MS);
    }
  }

  it('logout, logout-all, an admin tier change and a credit change on A take effect on B within 100 ms', async () => {
    const user = await registerUser(a);

    const first = await login(user);
    await warm(first);
    const logout = await propagation(
      'logout',
      async () => expect((await a.post('/api/auth/logout', undefined, { token: first })).status).toBe(204),
      async () => (await b.get('/api/me', { token: first })).body?.code === 'TOKEN_REVOKED',
    );

    const second = await login(user);
    const third = await login(user);
    await warm(second);
    await warm(third);
    const logoutAll = await propagation(
      'logout-all',
      async () => expect((await a.post('/api/auth/logout-all', undefined, { token: second })).status).toBe(204),
      async () => (await b.get('/api/me', { token: third })).body?.code === 'TOKEN_REVOKED',
    );

    const token = await login(user);
    expect(await warm(token)).toMatchObject({ tier: 'free' });
    const tier = await propagation(
      'admin tier change',
      async () =>
        expect((await a.patch(`/api/admin/users/${user.id}`, { tier: 'pro' }, { token: admin.token })).status).toBe(
          200,
        ),
      async () => (await b.get('/api/me', { token })).body?.tier === 'pro',
    );
    const credits = await propagation(
      'admin credit change',
      async () =>
        expect((await a.patch(`/api/admin/users/${user.id}`, { credits: 4242 }, { token: admin.token })).status).toBe(
          200,
        ),
      async () => (await b.get('/api/me', { token })).body?.credits === 4242,
    );

    for (const ms of [logout, logoutAll, tier, credits]) {
      expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
    }
  });

  it('after its listener connection is killed, B serves nothing stale and subscribes again', async () => {
    const user = await registerUser(a);
    const token = await login(user);
    expect(await warm(token)).toMatchObject({ tier: 'free' });

    // A change nobody is told of (triggers do not fire for a session in replica mode): B keeps its
    // copy, which shows that B answers from its cache and that the next step is what empties it.
    await unnotified("UPDATE users SET tier = 'team' WHERE id = $1", [user.id]);
    expect((await b.get('/api/me', { token })).body).toMatchObject({ tier: 'free' });

    const name = listenerApplicationName(cluster.api(1).process.child.pid);
    const listeners = async (): Promise<number[]> =>
      (
        await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name])
      ).rows.map((r) => r.pid);
    const [killed] = await listeners();
    expect(killed).toEqual(expect.any(Number));
    await db.query('SELECT pg_terminate_backend($1)', [killed]);

    // Disconnected, B drops its caches: the change it was never told of shows at once.
    await eventually('B to answer the row as it is', async () =>
      (await b.get('/api/me', { token })).body?.tier === 'team' ? true : undefined,
    );
    const again = await eventually('B to listen again', async () => {
      const pids = await listeners();
      return pids.length === 1 && pids[0] !== killed ? pids[0] : undefined;
    });
    expect(again).not.toBe(killed);

    // Subscribed again: B caches and hears of changes as before.
    await warm(token);
    const logout = await propagation(
      'logout after B re-subscribed',
      async () => expect((await a.post('/api/auth/logout', undefined, { token })).status).toBe(204),
      async () => (await b.get('/api/me', { token })).body?.code === 'TOKEN_REVOKED',
    );
    expect(logout).toBeLessThan(PROPAGATION_BOUND_MS);
  });

  it('a change of the balance alone is set on B’s cached user in place, without reading the row again', async () => {
    const user = await registerUser(a);
    const token = await login(user);
    expect(await warm(token)).toMatchObject({ tier: 'free' });
    // A change nobody is told of (replica mode): B's copy keeps the old tier.
    await unnotified("UPDATE users SET tier = 'team' WHERE id = $1", [user.id]);
    // As a charge writes it (UsersRepository.setCredits): the balance (and updated_at) alone.
    const balance = await propagation(
      'balance alone',
      async () => void (await db.query('UPDATE users SET credits = 4343, updated_at = now() WHERE id = $1', [user.id])),
      async () => (await b.get('/api/me', { token })).body?.credits === 4343,
    );
    // B set the balance on its copy: had it read the row again, it would answer the new tier too.
    expect((await b.get('/api/me', { token })).body).toMatchObject({ tier: 'free', credits: 4343 });
    expect(balance).toBeLessThan(PROPAGATION_BOUND_MS);
  });

  it('a credential replaced or deleted, and a site removed, on A take effect on B’s tool calls within 100 ms', async () => {
    const user = await registerUser(a);
    const added = await a.post('/api/vault/sites', { url: site.url }, { token: user.token });
    expect(added.status).toBe(201);
    const siteId = added.body.id as string;
    const writer = site.issueApiToken('alice', ['read', 'write']).token;
    expect((await a.post(`/api/vault/sites/${siteId}/token`, { token: writer }, { token: user.token })).status).toBe(
      201,
    );
    const createNote = (): Promise<{ status: number; body: Record<string, unknown> }> =>
      b.post(`/api/vault/sites/${siteId}/tools/create_note/call`, { input: { title: 'x' } }, { token: user.token });
    // B reads the site and its credential, then answers from its cache.
    expect((await createNote()).status).toBe(200);
    expect((await createNote()).status).toBe(200);
    // A change nobody is told of (replica mode: no trigger fires): B still calls with its copy, which
    // shows that it answers from its cache; the same change made in the open is then heard of.
    await unnotified("UPDATE site_credentials SET status = 'reauth_required' WHERE site_id = $1", [siteId]);
    expect((await createNote()).status).toBe(200);
    await db.query("UPDATE site_credentials SET status = 'active' WHERE site_id = $1", [siteId]);

    // A read-only token: the site refuses the write once B sends the new one.
    const reader = site.issueApiToken('alice', ['read']).token;
    const replaced = await propagation(
      'token replaced',
      async () =>
        expect(
          (await a.patch(`/api/vault/sites/${siteId}/token`, { token: reader }, { token: user.token })).status,
        ).toBe(200),
      async () => String((await createNote()).body?.error ?? '').includes('lacks the "write" scope'),
    );
    const deleted = await propagation(
      'token deleted',
      async () => expect((await a.delete(`/api/vault/sites/${siteId}/token`, { token: user.token })).status).toBe(204),
      async () => String((await createNote()).body?.error ?? '').includes('is not connected'),
    );
    expect((await a.post(`/api/vault/sites/${siteId}/token`, { token: writer }, { token: user.token })).status).toBe(
      201,
    );
    await eventually('B to call with the stored token again', async () =>
      (await createNote()).status === 200 ? true : undefined,
    );
    const removed = await propagation(
      'site removed',
      async () => expect((await a.delete(`/api/vault/sites/${siteId}`, { token: user.token })).status).toBe(204),
      async () => (await createNote()).body?.code === 'NOT_FOUND',
    );

    for (const ms of [replaced, deleted, removed]) {
      expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
    }
  });

  it('a site renamed, removed or added on A (or in SQL) takes effect on B’s /mcp tool list within 100 ms', async () => {
    const user = await registerUser(a);
    const added = await a.post('/api/vault/sites', { url: site.url }, { token: user.token });
    expect(added.status).toBe(201);
    const siteId = added.body.id as string;
    const mcpB = `${cluster.api(1).baseUrl}/mcp`;
    const client = await modernClient(mcpB, callerHeaders(user.token));
    try {
      // Asked afresh each time (the SDK client would keep the list for the hint's lifetime).
      const names = async (): Promise<string[]> => {
        const list = await rawPost(mcpB, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, callerHeaders(user.token));
        expect(list.status).toBe(200);
        return (list.json.result.tools as Array<{ name: string }>).map((t) => t.name);
      };
      const listed = await names();
      const prefix = listed.find((name) => name.endsWith('__search_notes'))!.replace(/__search_notes$/, '');
      expect(listed).toContain(`${prefix}__create_note`);
      // A rename nobody is told of (replica mode: no trigger fires): B still lists the old names, which
      // shows that it answers from its cache; the same kind of change made in the open is heard of.
      await unnotified(`UPDATE sites SET manifest = jsonb_set(manifest, '{name}', '"Unheard"') WHERE id = $1`, [
        siteId,
      ]);
      expect(await names()).toEqual(listed);
      const renamed = await propagation(
        'site renamed (SQL)',
        () =>
          db
            .query(`UPDATE sites SET manifest = jsonb_set(manifest, '{name}', '"Renamed Notes"') WHERE id = $1`, [
              siteId,
            ])
            .then(() => undefined),
        async () => (await names()).includes('renamed_notes__search_notes'),
      );
      const removed = await propagation(
        'site removed (MCP list)',
        async () => expect((await a.delete(`/api/vault/sites/${siteId}`, { token: user.token })).status).toBe(204),
        async () => !(await names()).some((name) => name.endsWith('__search_notes')),
      );
      let againId = '';
      const addedAgain = await propagation(
        'site added (MCP list)',
        async () => {
          const again = await a.post('/api/vault/sites', { url: site.url }, { token: user.token });
          expect(again.status).toBe(201);
          againId = again.body.id as string;
        },
        async () => (await names()).includes(`${prefix}__search_notes`),
      );
      const reader = site.issueApiToken('alice', ['read']).token;
      expect((await a.post(`/api/vault/sites/${againId}/token`, { token: reader }, { token: user.token })).status).toBe(
        201,
      );
      // And a call by name resolves against the new list.
      const called = await client.callTool({ name: `${prefix}__search_notes`, arguments: { query: 'x' } });
      expect(called.isError).not.toBe(true);
      for (const ms of [renamed, removed, addedAgain]) {
        expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
      }
    } finally {
      await client.close();
    }
  });
});
