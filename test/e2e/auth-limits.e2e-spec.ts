import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { hashPassword, scryptParams, verifyPassword } from '../../src/auth/password.js';
import { expectError, expectRateLimited, Http } from '../utils/http.js';
import { Stack } from '../utils/stack.js';
import { TEST_PASSWORD, uniqueEmail } from '../utils/users.js';

// Windows of lengths no other suite uses: counters live in the shared database, keyed by the limit's
// configuration, so these suites never share a counter with another file's stacks.
const AUTH_WINDOW = '53';
const FAILURE_WINDOW = '127';
const API_WINDOW = '43';

let next = randomInt(1, 200) * 250;
/** A client address of its own (198.18.0.0/15, the benchmarking range) for each call. */
function freshAddress(): string {
  next += 1;
  return `198.18.${(next >> 8) & 255}.${next & 255}`;
}

/** A /64 of its own (2001:db8::/32, the documentation range): `at(n)` is its address n. */
function freshPrefix(): { at: (n: number) => string } {
  const prefix = `2001:db8:${randomInt(0, 0xffff).toString(16)}:${randomInt(0, 0xffff).toString(16)}`;
  return { at: (n: number) => `${prefix}:${randomInt(1, 0xffff).toString(16)}::${n.toString(16)}` };
}

describe('login and registration limits; client addresses behind proxies (e2e)', () => {
  /**
   * One proxy in front (TRUST_PROXY=1): the test is that proxy and writes the X-Forwarded-For. Two
   * registrations a day per address; new accounts start with 7 credits.
   */
  let behindOne: Stack;
  /** Proxies named by address (127.0.0.1 and 10.0.0.0/8). */
  let behindListed: Stack;
  /** TRUST_PROXY unset. */
  let direct: Stack;
  /** The service's default scrypt cost (the stacks of other suites lower it), one hash at a time and one waiting. */
  let owasp: Stack;

  beforeAll(async () => {
    [behindOne, behindListed, direct, owasp] = await Promise.all([
      Stack.start({
        worker: false,
        env: {
          TRUST_PROXY: '1',
          AUTH_ATTEMPTS_PER_IP: '4',
          AUTH_ATTEMPTS_WINDOW_SECONDS: AUTH_WINDOW,
          LOGIN_FAILURES_PER_ACCOUNT: '3',
          LOGIN_FAILURE_WINDOW_SECONDS: FAILURE_WINDOW,
          REGISTRATIONS_PER_ADDRESS_PER_DAY: '2',
          SIGNUP_CREDITS: '7',
        },
      }),
      Stack.start({
        worker: false,
        env: {
          TRUST_PROXY: '127.0.0.1/32, ::1, 10.0.0.0/8',
          RATE_LIMIT_PER_IP: '3',
          RATE_LIMIT_WINDOW_SECONDS: API_WINDOW,
        },
      }),
      Stack.start({ worker: false, env: { RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW_SECONDS: API_WINDOW } }),
      Stack.start({
        worker: false,
        // Empty = unset: the service's own default.
        env: { PASSWORD_SCRYPT_N: '', PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '1' },
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([behindOne, behindListed, direct, owasp].map((stack) => stack?.stop()));
  });

  /** A call through the one trusted proxy: the proxy appends the address it saw. */
  function viaProxy(stack: Stack, address: string, spoofed?: string): { headers: Record<string, string> } {
    return { headers: { 'x-forwarded-for': spoofed === undefined ? address : `${spoofed}, ${address}` } };
  }

  async function register(stack: Stack, email = uniqueEmail()): Promise<{ id: string; email: string }> {
    const res = await new Http(stack.baseUrl).post(
      '/api/auth/register',
      { email, password: TEST_PASSWORD },
      viaProxy(stack, freshAddress()),
    );
    expect(res.status).toBe(201);
    return { id: res.body.user.id as string, email };
  }

  function login(stack: Stack, email: string, password: string, address = freshAddress(), spoofed?: string) {
    return new Http(stack.baseUrl).post('/api/auth/login', { email, password }, viaProxy(stack, address, spoofed));
  }

  it('an account is throttled after LOGIN_FAILURES_PER_ACCOUNT failures, from whatever addresses', async () => {
    const victim = await register(behindOne);
    const bystander = await register(behindOne);
    // Three guesses, each from an address of its own: the per-address limit never sees more than one.
    for (let i = 0; i < 3; i += 1) {
      expectError(await login(behindOne, victim.email.toUpperCase(), `wrong-${i}-password`), 'UNAUTHORIZED', 401);
    }
    // The next attempt is refused before its password is checked, even the right one, from a new address.
    expectRateLimited(await login(behindOne, victim.email, TEST_PASSWORD), Number(FAILURE_WINDOW));
    expectRateLimited(await login(behindOne, victim.email, 'wrong-3-password'), Number(FAILURE_WINDOW));
    // Other accounts are not affected.
    expect((await login(behindOne, bystander.email, TEST_PASSWORD)).status).toBe(200);
    // Unknown emails are counted the same way (no difference to tell them from accounts).
    const unknown = uniqueEmail('unknown');
    for (let i = 0; i < 3; i += 1) {
      expectError(await login(behindOne, unknown, TEST_PASSWORD), 'UNAUTHORIZED', 401);
    }
    expectRateLimited(await login(behindOne, unknown, TEST_PASSWORD), Number(FAILURE_WINDOW));
  });

  it("a successful login clears the account's failures: only failures in a row count", async () => {
    const user = await register(behindOne);
    for (let round = 0; round < 2; round += 1) {
      expectError(await login(behindOne, user.email, 'wrong-password!'), 'UNAUTHORIZED', 401);
      expectError(await login(behindOne, user.email, 'wrong-password!'), 'UNAUTHORIZED', 401);
      expect((await login(behindOne, user.email, TEST_PASSWORD)).status).toBe(200);
    }
  });

  it('an address is limited across accounts (login and registration together), others are not', async () => {
    const [a, b] = [await register(behindOne), await register(behindOne)];
    const address = freshAddress();
    const http = new Http(behindOne.baseUrl);
    expect((await login(behindOne, a.email, TEST_PASSWORD, address)).status).toBe(200);
    expect((await login(behindOne, b.email, TEST_PASSWORD, address)).status).toBe(200);
    expectError(await login(behindOne, uniqueEmail(), TEST_PASSWORD, address), 'UNAUTHORIZED', 401);
    const registered = await http.post(
      '/api/auth/register',
      { email: uniqueEmail(), password: TEST_PASSWORD },
      viaProxy(behindOne, address),
    );
    expect(registered.status).toBe(201);
    // Four attempts spent the address's points: a fifth is refused whatever account it names.
    expectRateLimited(await login(behindOne, a.email, TEST_PASSWORD, address), Number(AUTH_WINDOW));
    expectRateLimited(
      await http.post(
        '/api/auth/register',
        { email: uniqueEmail(), password: TEST_PASSWORD },
        viaProxy(behindOne, address),
      ),
      Number(AUTH_WINDOW),
    );
    // The accounts themselves are fine from elsewhere.
    expect((await login(behindOne, a.email, TEST_PASSWORD)).status).toBe(200);
  });

  it('TRUST_PROXY=1: a client-written X-Forwarded-For entry does not change the address that is counted', async () => {
    const user = await register(behindOne);
    const address = freshAddress();
    const answers = [];
    // The left-most entry is the client's own invention; rotating it must not give fresh points.
    for (let i = 0; i < 5; i += 1) {
      answers.push(await login(behindOne, user.email, TEST_PASSWORD, address, freshAddress()));
    }
    expect(answers.slice(0, 4).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expectRateLimited(answers[4]!, Number(AUTH_WINDOW));
    // The address the proxy appended is what counts: another one is not limited.
    expect((await login(behindOne, user.email, TEST_PASSWORD, freshAddress(), address)).status).toBe(200);
  });

  it('TRUST_PROXY with addresses / CIDRs: the right-most entry not from a listed proxy is the client', async () => {
    const http = new Http(behindListed.baseUrl);
    const client = freshAddress();
    const statuses = [];
    for (let i = 0; i < 4; i += 1) {
      // spoofed, client (seen by the proxy at 10.1.2.3), the proxy at 10.1.2.3 (seen by us over loopback)
      const answer = await http.get('/api/me', {
        headers: { 'x-forwarded-for': `${freshAddress()}, ${client}, 10.1.2.3` },
      });
      statuses.push(answer.status);
      if (i === 3) {
        expectRateLimited(answer, Number(API_WINDOW));
      }
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Neither the listed proxy nor the loopback address is what is counted: another client is not limited.
    expectError(
      await http.get('/api/me', { headers: { 'x-forwarded-for': `${client}, ${freshAddress()}, 10.1.2.3` } }),
      'UNAUTHORIZED',
      401,
    );
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped IPv6 address as its IPv4 address (sign-in limit)', async () => {
    const user = await register(behindOne);
    const net = freshPrefix();
    // Four attempts, each from another address of one /64: one counter.
    for (let i = 1; i <= 4; i += 1) {
      expect((await login(behindOne, user.email, TEST_PASSWORD, net.at(i))).status).toBe(200);
    }
    expectRateLimited(await login(behindOne, user.email, TEST_PASSWORD, net.at(5)), Number(AUTH_WINDOW));
    // The next /64 is another client.
    expect((await login(behindOne, user.email, TEST_PASSWORD, freshPrefix().at(1))).status).toBe(200);
    const v4 = freshAddress();
    for (let i = 0; i < 2; i += 1) {
      expect((await login(behindOne, user.email, TEST_PASSWORD, v4)).status).toBe(200);
      expect((await login(behindOne, user.email, TEST_PASSWORD, `::ffff:${v4}`)).status).toBe(200);
    }
    expectRateLimited(await login(behindOne, user.email, TEST_PASSWORD, `::ffff:${v4}`), Number(AUTH_WINDOW));
  });

  it('counts an IPv6 client by its /64 (API limit)', async () => {
    const http = new Http(behindListed.baseUrl);
    const net = freshPrefix();
    const statuses = [];
    for (let i = 1; i <= 4; i += 1) {
      statuses.push((await http.get('/api/me', { headers: { 'x-forwarded-for': `${net.at(i)}, 10.1.2.3` } })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    const other = freshPrefix().at(1);
    expectError(
      await http.get('/api/me', { headers: { 'x-forwarded-for': `${other}, 10.1.2.3` } }),
      'UNAUTHORIZED',
      401,
    );
  });

  it('REGISTRATIONS_PER_ADDRESS_PER_DAY caps the accounts an address (IPv6: its /64) makes; SIGNUP_CREDITS is their balance', async () => {
    const http = new Http(behindOne.baseUrl);
    const net = freshPrefix();
    const registerFrom = (address: string, email = uniqueEmail('daily')) =>
      http.post('/api/auth/register', { email, password: TEST_PASSWORD }, viaProxy(behindOne, address));
    const first = await registerFrom(net.at(1));
    expect(first.status).toBe(201);
    expect(first.body.user.credits).toBe(7);
    const token = first.body.accessToken as string;
    expect((await http.post('/api/auth/accept-terms', {}, { token })).status).toBe(200);
    const ledger = await http.get('/api/billing/ledger', { token });
    expect(ledger.body.items).toMatchObject([{ amount: 7, reason: 'signup_grant', balanceAfter: 7 }]);
    // A taken email is a mistake, not an account: it costs none of the day's registrations.
    expectError(await registerFrom(net.at(2), first.body.user.email as string), 'VALIDATION_ERROR', 400);
    expect((await registerFrom(net.at(3))).status).toBe(201);
    // Two accounts from this /64 today: the third is refused, from any of its addresses, for up to a day
    // (the address's fourth sign-in attempt of the minute: within AUTH_ATTEMPTS_PER_IP, so it is the day's cap).
    const capped = await registerFrom(net.at(4));
    expectRateLimited(capped, 24 * 3600);
    expect(capped.body.error).toMatch(/today/);
    expect((await registerFrom(freshPrefix().at(1))).status).toBe(201);
    // Signing in is not registering: the accounts made still log in.
    const email = first.body.user.email as string;
    expect((await login(behindOne, email, TEST_PASSWORD, freshPrefix().at(1))).status).toBe(200);
  });

  it('TRUST_PROXY unset: X-Forwarded-For is ignored, the connection address is counted', async () => {
    const http = new Http(direct.baseUrl);
    const statuses = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await http.get('/api/me', { headers: { 'x-forwarded-for': freshAddress() } })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('the counters live in an unlogged table: shared by every process, no WAL flush per request', async () => {
    const db = new pg.Client({ connectionString: direct.env.DATABASE_URL });
    await db.connect();
    try {
      const table = await db.query(`SELECT relpersistence FROM pg_class WHERE relname = 'rate_limits'`);
      expect(table.rows).toEqual([{ relpersistence: 'u' }]);
      // The requests of the tests above were counted there.
      const counted = await db.query(`SELECT count(*)::int AS n FROM rate_limits WHERE key LIKE 'api-ip-%'`);
      expect(counted.rows[0].n).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
  });

  it('hashes at the OWASP cost by default and re-hashes a weaker stored hash at the next successful login', async () => {
    const http = new Http(owasp.baseUrl);
    const email = uniqueEmail('rehash');
    expect((await http.post('/api/auth/register', { email, password: TEST_PASSWORD })).status).toBe(201);
    const db = new pg.Client({ connectionString: owasp.env.DATABASE_URL });
    await db.connect();
    try {
      const stored = async (): Promise<string> =>
        (
          (await db.query('SELECT password_hash FROM users WHERE email = $1', [email])).rows[0] as {
            password_hash: string;
          }
        ).password_hash;
      expect(await stored()).toMatch(/^scrypt\$131072\$8\$1\$/);

      // A hash of the old parameters (2^15, what the service used to write).
      const old = await hashPassword(TEST_PASSWORD, scryptParams(2 ** 15));
      await db.query('UPDATE users SET password_hash = $1 WHERE email = $2', [old, email]);
      // A failed login does not touch it.
      expectError(await http.post('/api/auth/login', { email, password: 'not the password' }), 'UNAUTHORIZED', 401);
      expect(await stored()).toBe(old);

      const answer = await http.post('/api/auth/login', { email, password: TEST_PASSWORD });
      expect(answer.status).toBe(200);
      const upgraded = await stored();
      expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/);
      expect(upgraded).not.toBe(old);
      await expect(verifyPassword(TEST_PASSWORD, upgraded)).resolves.toBe(true);
      // Once upgraded, a login leaves it as it is.
      expect((await http.post('/api/auth/login', { email, password: TEST_PASSWORD })).status).toBe(200);
      expect(await stored()).toBe(upgraded);
    } finally {
      await db.end();
    }
  });

  it('bounds concurrent hashing: past the slots and the queue, RATE_LIMITED at once', async () => {
    const http = new Http(owasp.baseUrl);
    // One hash at a time and one waiting (PASSWORD_HASH_CONCURRENCY=1, PASSWORD_HASH_QUEUE=1); each takes
    // a few hundred milliseconds at 2^17, so of six logins sent together, four find no place.
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => http.post('/api/auth/login', { email: uniqueEmail(), password: TEST_PASSWORD })),
    );
    const limited = answers.filter((a) => a.status === 429);
    // Four when all six arrive within the first hash (the usual case); a slow arrival may find the queue free.
    expect(limited.length).toBeGreaterThanOrEqual(3);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(6 - limited.length);
    for (const answer of limited) {
      expectRateLimited(answer, 1);
      expect(answer.body.error).toMatch(/busy/);
    }
  });
});
