import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { expectError, Http } from '../utils/http.js';
import { eventually } from '../utils/runs.js';
import { approveAtSite, completeOAuth, siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';

/** The database pool of a service process (src/database/data-source.ts `extra.max`): fewer than the waiting calls. */
const POOL_SIZE = 20;
const WAITING_CALLS = 50;
const TOKEN_STALL_MS = 5_000;
/** The first part of the stall, when the 50 calls themselves are still arriving. */
const BURST_MS = 1_000;

describe('token refresh under a lease, outside any transaction (e2e)', () => {
  let sites: TestSites;
  const stacks: Stack[] = [];

  beforeAll(async () => {
    sites = await testSites();
  });

  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
    await sites?.stopAll();
  });

  async function connected(env: Record<string, string>, accessTokenTtlSeconds?: number) {
    const site = await sites.start({ accessTokenTtlSeconds });
    const stack = await Stack.start({ worker: false, env: { ...siteEnv(sites, [site]), ...env } });
    stacks.push(stack);
    const http = new Http(stack.baseUrl);
    site.allowRedirect('agentsite', `${stack.baseUrl}/api/oauth/callback`);
    const user = await registerUser(http);
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id as string;
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    expect((await completeOAuth(http, callback, user.token)).status).toBe(200);
    return { site, stack, http, user, siteId };
  }

  /** How long the other user's requests take: their own account and their own vault. */
  async function timeOthers(http: Http, other: TestUser): Promise<number> {
    const started = performance.now();
    const [me, vault] = await Promise.all([
      http.get('/api/me', { token: other.token }),
      http.get('/api/vault/sites', { token: other.token }),
    ]);
    expect([me.status, vault.status]).toEqual([200, 200]);
    return performance.now() - started;
  }

  it(`a token endpoint stalling ${TOKEN_STALL_MS / 1000} s while ${WAITING_CALLS} calls wait does not hold up other users`, async () => {
    expect(POOL_SIZE).toBeLessThan(WAITING_CALLS);
    const { site, http, user, siteId } = await connected({ OUTGOING_CALLS_PER_MINUTE: '1000' });
    const other = await registerUser(http);
    await http.post('/api/vault/sites', { url: `${site.url}/elsewhere` }, { token: other.token });

    const idle: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      idle.push(await timeOthers(http, other));
    }

    site.expireAccessTokens(); // every call gets a 401 and needs the one refresh
    site.tokenDelayMs = TOKEN_STALL_MS;
    const calls = Array.from({ length: WAITING_CALLS }, () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token }),
    );
    let settled = false;
    const all = Promise.all(calls).finally(() => (settled = true));
    await eventually('the refresh reaches the stalled token endpoint', async () =>
      site.stalledTokenRequests > 0 ? true : undefined,
    );
    const stalledAt = Date.now();
    // The 50 calls arrive as one burst (authentication, counters, the first POST and its 401) whatever the
    // token endpoint does; what is measured is the rest of the stall, while they all wait on the refresh.
    const during: number[] = [];
    while (!settled && Date.now() - stalledAt < TOKEN_STALL_MS - 500) {
      const sample = await timeOthers(http, other);
      // What of this request's time fell after the burst (a request still waiting then counts too).
      const sinceBurst = Math.min(Date.now() - stalledAt - BURST_MS, sample);
      if (sinceBurst > 0) {
        during.push(sinceBurst);
      }
    }
    const results = await all;
    // Other users were answered throughout the stall about as fast as when the site was idle.
    const worst = Math.max(...during);
    process.stdout.write(
      `FIGURES idle max ${Math.max(...idle).toFixed(0)} ms, during stall max ${worst.toFixed(0)} ms over ${during.length} samples\n`,
    );
    // Held up, a request would wait out the stall (about 4.5 s after the burst); half the stall tells
    // that apart with room for a loaded CI machine (1.2 s was seen there while two suites ran).
    expect(worst).toBeLessThan(TOKEN_STALL_MS / 2);
    expect(during.length).toBeGreaterThanOrEqual(5);

    expect(results.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.text}`))).toEqual(
      Array(WAITING_CALLS).fill(200),
    );
    expect(site.stats.refreshes).toBe(1);
    expect(site.stats.invalidGrants).toBe(0);
    expect(site.stalledTokenRequests).toBe(1);
  });

  it('a call refused by the outgoing limit does not refresh the token', async () => {
    // Tokens that live 30 s are inside the refresh skew: every call refreshes before it is sent.
    const { site, http, user, siteId } = await connected({ OUTGOING_CALLS_PER_MINUTE: '1' }, 30);
    const call = () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token });
    expect((await call()).status).toBe(200);
    expect(site.stats.refreshes).toBe(1);
    expectError(await call(), 'OUTGOING_RATE_LIMITED', 429);
    expect(site.stats.refreshes).toBe(1);
  });

  it('a lease that lapses mid-refresh: the late owner keeps its pair, the replay after it marks nothing reauth_required', async () => {
    const { site, stack, http, user, siteId } = await connected({ OUTGOING_CALLS_PER_MINUTE: '1000' });
    // A provider that rotates refresh tokens and refuses a replay without revoking the grant (the reference
    // site's default revokes it all, which would make reconnecting the right answer anyway).
    site.revokeFamilyOnReuse = false;
    const call = () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token });
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const row = async () =>
        (await db.query(`SELECT status, generation FROM site_credentials WHERE site_id = $1`, [siteId])).rows[0] as {
          status: string;
          generation: number;
        };
      const before = await row();

      site.expireAccessTokens();
      site.tokenDelayMs = 2_000;
      const first = call();
      await eventually('the first refresh waits on the token endpoint', async () =>
        site.stalledTokenRequests === 1 ? true : undefined,
      );
      // Its lease lapses while it waits (as a token request or a final write held up past the lease would).
      await db.query(
        `UPDATE site_credentials SET refresh_lease_until = now() - interval '1 second' WHERE site_id = $1`,
        [siteId],
      );
      // A second caller takes the lapsed lease over and replays the refresh token the first one is spending;
      // its answer (invalid_grant) comes after the first caller has stored the new pair.
      site.tokenDelayMs = 3_500;
      const second = call();
      const results = await Promise.all([first, second]);

      expect(results.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.text}`))).toEqual([200, 200]);
      expect(site.stats.refreshes).toBe(1);
      expect(site.stats.invalidGrants).toBe(1);
      expect(site.stalledTokenRequests).toBe(2);
      expect(await row()).toEqual({ status: 'active', generation: before.generation + 1 });
      expect(stack.logs()).toMatch(/refresh lease lost after \d+ ms .*kept as generation/);
      expect(stack.logs()).toMatch(
        /refused \(invalid_grant\) after its lease was lost; generation \d+ stored meanwhile/,
      );

      // The kept pair works: the next call needs no refresh.
      site.tokenDelayMs = 0;
      expect((await call()).status).toBe(200);
      expect(site.stats.refreshes).toBe(1);
    } finally {
      await db.end();
    }
  });
});
