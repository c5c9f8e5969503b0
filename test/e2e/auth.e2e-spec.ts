import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { registerAdmin } from '../utils/admin.js';
import { expectError, Http } from '../utils/http.js';
import { Stack, TEST_JWT_SECRET } from '../utils/stack.js';
import { registerUser, TEST_PASSWORD, uniqueEmail } from '../utils/users.js';

/** Signs an HS256 JWT by hand, to make tokens the service did not issue (expired, foreign, odd claims). */
function signJwt(claims: Record<string, unknown>, secret = TEST_JWT_SECRET): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

describe('auth and users (e2e)', () => {
  let stack: Stack;
  let http: Http;

  beforeAll(async () => {
    stack = await Stack.start({ worker: false });
    http = new Http(stack.baseUrl);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('register → accept terms → /api/me', async () => {
    const email = uniqueEmail();
    const registered = await http.post('/api/auth/register', { email, password: TEST_PASSWORD, name: 'Ada' });
    expect(registered.status).toBe(201);
    expect(registered.body.expiresIn).toBe(3600);
    expect(registered.body.user).toMatchObject({
      email,
      name: 'Ada',
      role: 'user',
      tier: 'free',
      acceptedTermsAt: null,
    });
    expect(JSON.stringify(registered.body)).not.toContain('password');
    const token = registered.body.accessToken as string;

    const accepted = await http.post('/api/auth/accept-terms', { version: '2026-11' }, { token });
    expect(accepted.status).toBe(200);
    expect(Date.parse(accepted.body.acceptedTermsAt)).toBeGreaterThan(Date.now() - 60_000);

    const me = await http.get('/api/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: registered.body.user.id,
      email,
      role: 'user',
      tier: 'free',
      subscriptionStatus: 'active',
      acceptedTermsAt: accepted.body.acceptedTermsAt,
    });
    expect(typeof me.body.credits).toBe('number');
  });

  it('refuses a duplicate email (any case) and a short password with VALIDATION_ERROR naming the field', async () => {
    const user = await registerUser(http);
    const dup = await http.post('/api/auth/register', { email: user.email.toUpperCase(), password: TEST_PASSWORD });
    expectError(dup, 'VALIDATION_ERROR', 400);
    expect(dup.body.details).toEqual([{ field: 'email', message: 'email is already registered' }]);

    const short = await http.post('/api/auth/register', { email: uniqueEmail(), password: 'elevenchars' });
    expectError(short, 'VALIDATION_ERROR', 400);
    expect(short.body.details.map((d: { field: string }) => d.field)).toEqual(['password']);
  });

  it('logs in with the right password; UNAUTHORIZED for a wrong one or an unknown email', async () => {
    const user = await registerUser(http);
    const ok = await http.post('/api/auth/login', { email: user.email, password: TEST_PASSWORD });
    expect(ok.status).toBe(200);
    expect(ok.body.user.id).toBe(user.id);
    expectError(
      await http.post('/api/auth/login', { email: user.email, password: `${TEST_PASSWORD}!` }),
      'UNAUTHORIZED',
      401,
    );
    expectError(
      await http.post('/api/auth/login', { email: uniqueEmail(), password: TEST_PASSWORD }),
      'UNAUTHORIZED',
      401,
    );
  });

  it('answers UNAUTHORIZED without a token and INVALID_TOKEN for malformed, foreign or odd tokens', async () => {
    const user = await registerUser(http);
    expectError(await http.get('/api/me'), 'UNAUTHORIZED', 401);
    expectError(await http.get('/api/me', { token: 'not-a-jwt' }), 'INVALID_TOKEN', 401);
    expectError(await http.get('/api/me', { headers: { authorization: 'Basic abc' } }), 'INVALID_TOKEN', 401);
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: user.id, jti: randomUUID(), iatMs: Date.now(), iat: now, exp: now + 600 };
    expectError(
      await http.get('/api/me', { token: signJwt(claims, 'another-secret-another-secret-123') }),
      'INVALID_TOKEN',
      401,
    );
    // Tampered payload, original signature.
    const [h, , s] = user.token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: randomUUID() })).toString('base64url')}.${s}`;
    expectError(await http.get('/api/me', { token: forged }), 'INVALID_TOKEN', 401);
    // Right signature but claims we never issue.
    expectError(
      await http.get('/api/me', { token: signJwt({ sub: 'admin', iat: now, exp: now + 600 }) }),
      'INVALID_TOKEN',
      401,
    );
    // A well-formed token of a user that does not exist.
    expectError(await http.get('/api/me', { token: signJwt({ ...claims, sub: randomUUID() }) }), 'INVALID_TOKEN', 401);
    // The same claims signed right are accepted: the failures above are the tokens', not the route's.
    expect((await http.get('/api/me', { token: signJwt(claims) })).status).toBe(200);
  });

  it('answers TOKEN_EXPIRED for an expired token', async () => {
    const user = await registerUser(http);
    const now = Math.floor(Date.now() / 1000);
    const expired = signJwt({
      sub: user.id,
      jti: randomUUID(),
      iatMs: (now - 7200) * 1000,
      iat: now - 7200,
      exp: now - 3600,
    });
    expectError(await http.get('/api/me', { token: expired }), 'TOKEN_EXPIRED', 401);
  });

  it('a token already accepted (its signature remembered) still expires on time and is still revoked', async () => {
    const user = await registerUser(http);
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: user.id, jti: randomUUID(), iatMs: Date.now(), iat: now, exp: now + 2 };
    const shortLived = signJwt(claims);
    expect((await http.get('/api/me', { token: shortLived })).status).toBe(200);
    expect((await http.get('/api/me', { token: shortLived })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, (now + 2) * 1000 - Date.now() + 50));
    expectError(await http.get('/api/me', { token: shortLived }), 'TOKEN_EXPIRED', 401);
    expectError(await http.get('/api/me', { token: shortLived }), 'TOKEN_EXPIRED', 401);

    // Accepted twice, then revoked by logout-all: the remembered signature does not skip revocation.
    const later = signJwt({ ...claims, jti: randomUUID(), exp: now + 600 });
    expect((await http.get('/api/me', { token: later })).status).toBe(200);
    expect((await http.get('/api/me', { token: later })).status).toBe(200);
    expect((await http.post('/api/auth/logout-all', undefined, { token: later })).status).toBe(204);
    expectError(await http.get('/api/me', { token: later }), 'TOKEN_REVOKED', 401);
  });

  it('logout revokes that token only; logout-all revokes every earlier token; both survive a restart', async () => {
    const user = await registerUser(http);
    const second = (await http.post('/api/auth/login', { email: user.email, password: TEST_PASSWORD })).body
      .accessToken;
    const third = (await http.post('/api/auth/login', { email: user.email, password: TEST_PASSWORD })).body.accessToken;

    expect((await http.post('/api/auth/logout', undefined, { token: user.token })).status).toBe(204);
    expectError(await http.get('/api/me', { token: user.token }), 'TOKEN_REVOKED', 401);
    expect((await http.get('/api/me', { token: second })).status).toBe(200);

    expect((await http.post('/api/auth/logout-all', undefined, { token: second })).status).toBe(204);
    expectError(await http.get('/api/me', { token: second }), 'TOKEN_REVOKED', 401);
    expectError(await http.get('/api/me', { token: third }), 'TOKEN_REVOKED', 401);

    const fresh = (await http.post('/api/auth/login', { email: user.email, password: TEST_PASSWORD })).body.accessToken;
    expect((await http.get('/api/me', { token: fresh })).status).toBe(200);

    await stack.restartApi();
    expectError(await http.get('/api/me', { token: user.token }), 'TOKEN_REVOKED', 401);
    expectError(await http.get('/api/me', { token: third }), 'TOKEN_REVOKED', 401);
    expect((await http.get('/api/me', { token: fresh })).status).toBe(200);
  });

  it('gates the terms-gated routes with TERMS_NOT_ACCEPTED until the terms are accepted', async () => {
    const user = await registerUser(http, { acceptTerms: false });
    expectError(await http.get('/api/billing', { token: user.token }), 'TERMS_NOT_ACCEPTED', 403);
    // Not gated: the user can still read who they are.
    expect((await http.get('/api/me', { token: user.token })).status).toBe(200);
    expect((await http.post('/api/auth/accept-terms', {}, { token: user.token })).status).toBe(200);
    expect((await http.get('/api/billing', { token: user.token })).status).toBe(200);
  });

  it('gates by the route, not the path string: every casing of a gated route answers TERMS_NOT_ACCEPTED', async () => {
    const user = await registerUser(http, { acceptTerms: false });
    const token = user.token;
    const id = randomUUID();
    // Each gated controller, in the casing of the spec and in others Express routes just the same.
    const gated: Array<[string, string, unknown?]> = [
      ['GET', '/api/sessions/x'],
      ['GET', '/API/SESSIONS/x'],
      ['GET', '/Api/Sessions/x'],
      ['POST', '/API/SESSIONS/x/MESSAGES', { content: 'hi' }],
      ['DELETE', '/api/SESSIONS/x'],
      ['GET', '/Api/Vault/sites'],
      ['GET', '/API/VAULT/SITES'],
      ['POST', '/api/vault/SITES', { url: 'https://example.com' }],
      ['GET', '/API/AGENTS'],
      ['GET', `/api/Agents/${id}`],
      ['GET', `/API/RUNS/${id}`],
      ['GET', `/Api/Runs/${id}`],
      ['GET', '/API/WORKSPACES'],
      ['POST', '/Api/Workspaces', { name: 'w' }],
      ['GET', '/API/BILLING'],
      ['GET', '/api/Billing'],
      ['POST', '/API/BILLING/CREDITS/PURCHASE', { amount: 10 }],
    ];
    for (const [method, path, body] of gated) {
      const answer = await http.request(method, path, { token, body });
      try {
        expectError(answer, 'TERMS_NOT_ACCEPTED', 403);
      } catch (err) {
        throw new Error(`${method} ${path}: ${(err as Error).message}`, { cause: err });
      }
    }
    // Routes that are not gated answer as before, whatever their casing.
    expect((await http.get('/API/ME', { token })).status).toBe(200);
    expect((await http.get('/api/Me', { token })).body.id).toBe(user.id);
    expect((await http.post('/API/AUTH/ACCEPT-TERMS', {}, { token })).status).toBe(200);
    // Accepted: the same casings now reach the routes (a session token that names nothing, a list).
    expect((await http.get('/API/SESSIONS/x', { token })).body.code).not.toBe('TERMS_NOT_ACCEPTED');
    expect((await http.get('/Api/Vault/sites', { token })).status).toBe(200);
    // The body parser answers before routing, so its webhook check reads the path: in any casing.
    for (const path of [`/api/webhooks/agent/${id}`, `/API/WEBHOOKS/AGENT/${id}`, `/Api/Webhooks/agent/${id}`]) {
      const malformed = await http.request('POST', path, {
        rawBody: '{"n": ',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 'WEBHOOK_PAYLOAD_INVALID', 422);
    }
  });

  it('admin routes: ADMIN_REQUIRED for users; admins list and change users', async () => {
    const user = await registerUser(http);
    expectError(await http.get('/api/admin/users', { token: user.token }), 'ADMIN_REQUIRED', 403);
    expectError(
      await http.patch(`/api/admin/users/${user.id}`, { tier: 'team' }, { token: user.token }),
      'ADMIN_REQUIRED',
      403,
    );

    const admin = await registerAdmin(http, stack);
    const me = await http.get('/api/me', { token: admin.token });
    expect(me.body.role).toBe('admin');

    const patched = await http.patch(
      `/api/admin/users/${user.id}`,
      { tier: 'harness', credits: 777 },
      { token: admin.token },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: user.id, tier: 'harness', credits: 777 });
    expect((await http.get('/api/me', { token: user.token })).body).toMatchObject({ tier: 'harness', credits: 777 });

    const bad = await http.patch(
      `/api/admin/users/${user.id}`,
      { tier: 'platinum', credits: -1 },
      { token: admin.token },
    );
    expectError(bad, 'VALIDATION_ERROR', 400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['credits', 'tier']);
    expectError(
      await http.patch(`/api/admin/users/${randomUUID()}`, { tier: 'pro' }, { token: admin.token }),
      'NOT_FOUND',
      404,
    );

    // Paginated listing walks every user exactly once.
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: Array<{ id: string }>; nextCursor: string | null } } =
        await http.get(`/api/admin/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: admin.token });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      for (const item of page.body.items) {
        expect(seen.has(item.id)).toBe(false);
        seen.add(item.id);
      }
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(seen.has(user.id) && seen.has(admin.id)).toBe(true);
    expectError(await http.get('/api/admin/users?limit=500', { token: admin.token }), 'VALIDATION_ERROR', 400);
    expectError(await http.get('/api/admin/users?cursor=garbage', { token: admin.token }), 'VALIDATION_ERROR', 400);
  });
});
