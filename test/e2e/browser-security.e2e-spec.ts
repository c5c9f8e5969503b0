import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, Http, type HttpAnswer, rawRequest } from '../utils/http.js';
import { eventually } from '../utils/runs.js';
import { Stack } from '../utils/stack.js';
import { registerUser, TEST_PASSWORD, uniqueEmail } from '../utils/users.js';

const APP = 'https://app.example.test';
const DEV = 'http://localhost:5173';
const OTHER = 'https://elsewhere.example.test';
/** The Temporal UI: allowed for the codec routes (TEMPORAL_UI_ORIGIN), and listed in CORS_ORIGINS too. */
const UI = 'https://temporal-ui.example.test';

/** What a browser sends before a cross-origin POST with a token, a workspace and a request id. */
function preflight(stack: Stack, path: string, origin: string, method = 'POST'): Promise<HttpAnswer> {
  return rawRequest(stack.baseUrl, 'OPTIONS', path, {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization,content-type,x-workspace-id,x-request-id',
  });
}

const listed = (answer: HttpAnswer, name: string): string[] =>
  (answer.headers.get(name) ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

/** The attributes of the Set-Cookie line of a cookie, lower case, by name (value under `value`). */
function setCookie(answer: HttpAnswer, name: string): Record<string, string> | undefined {
  const line = answer.headers.getSetCookie().find((one) => one.startsWith(`${name}=`));
  if (line === undefined) {
    return undefined;
  }
  const [first, ...attributes] = line.split(';').map((part) => part.trim());
  const found: Record<string, string> = { value: first!.slice(name.length + 1) };
  for (const attribute of attributes) {
    const eq = attribute.indexOf('=');
    found[(eq < 0 ? attribute : attribute.slice(0, eq)).toLowerCase()] = eq < 0 ? '' : attribute.slice(eq + 1);
  }
  return found;
}

/** The access log line of an answer (found by its request id). */
function accessLine(stack: Stack, answer: HttpAnswer): Promise<string> {
  const id = answer.headers.get('x-request-id');
  return eventually('an access line', async () =>
    stack
      .logs()
      .split('\n')
      .find((l) => l.includes(`"requestId":"${id}"`) && l.includes('"context":"http"')),
  );
}

/** The headers every answer carries, whatever serves it. */
function expectCommonHeaders(answer: HttpAnswer): void {
  expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  expect(answer.headers.get('x-frame-options')).toBe('DENY');
  expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
  expect(answer.headers.get('x-correlation-id')).toBeTruthy();
  expect(answer.headers.get('x-powered-by')).toBeNull();
}

describe('the API in the browser: CORS_ORIGINS and security headers (e2e)', () => {
  let withCors: Stack;
  let withoutCors: Stack;

  beforeAll(async () => {
    [withCors, withoutCors] = await Promise.all([
      Stack.start({
        worker: false,
        env: {
          CORS_ORIGINS: `${APP},${DEV},${UI}`,
          TEMPORAL_UI_ORIGIN: UI,
          // Published over HTTPS by a proxy in front of it: HSTS.
          PUBLIC_BASE_URL: 'https://agentsite.example.test',
        },
      }),
      Stack.start({ worker: false, env: { OAUTH_COMPLETE_URL: 'none' } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([withCors?.stop(), withoutCors?.stop()]);
  });

  it('answers a listed origin, errors included, without credentials and with the ids exposed', async () => {
    for (const origin of [APP, DEV]) {
      const answer = await rawRequest(withCors.baseUrl, 'GET', '/api/me', { origin });
      expectError(answer, 'UNAUTHORIZED', 401);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect(listed(answer, 'vary')).toContain('origin');
      expect(listed(answer, 'access-control-expose-headers')).toEqual(
        expect.arrayContaining(['x-request-id', 'x-correlation-id', 'retry-after']),
      );
    }
  });

  it('answers the preflight of a listed origin with 204, the methods and the API headers', async () => {
    const answer = await preflight(withCors, '/api/agents', APP);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    expect(listed(answer, 'access-control-allow-methods')).toEqual(
      expect.arrayContaining(['get', 'post', 'patch', 'put', 'delete']),
    );
    expect(listed(answer, 'access-control-allow-headers')).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-workspace-id', 'x-request-id']),
    );
    expect(answer.headers.get('access-control-max-age')).toBe('600');
    // Answered after the request id and the security headers were set (CORS runs after them).
    expectCommonHeaders(answer);
    expect(answer.headers.get('x-request-id')).toBe(answer.headers.get('x-correlation-id'));
    // ... and the access log line, written once it was answered.
    expect(JSON.parse(await accessLine(withCors, answer))).toMatchObject({
      method: 'OPTIONS',
      status: 204,
      route: null,
    });
    // Paths with parameters and a DELETE alike.
    const del = await preflight(withCors, '/api/agents/0b6e1c2a-4f7e-4a4e-9a57-3d3f8f0c1d2e', DEV, 'DELETE');
    expect(del.status).toBe(204);
    expect(del.headers.get('access-control-allow-origin')).toBe(DEV);
  });

  it('gives any other origin no CORS headers at all: the browser keeps the answer from its page', async () => {
    // Exact origins only: another scheme, port or a sub-domain is another origin.
    for (const origin of [OTHER, 'http://app.example.test', 'http://localhost:5174', 'https://x.app.example.test']) {
      const answer = await rawRequest(withCors.baseUrl, 'GET', '/api/me', { origin });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      const refused = await preflight(withCors, '/api/agents', origin);
      expect(refused.status).not.toBe(204);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(refused.headers.get('access-control-allow-methods')).toBeNull();
    }
    // Logged as NOT_FOUND on no route (not on the catch-all OPTIONS route CORS adds).
    const refused = await preflight(withCors, '/api/agents', OTHER);
    expect(refused.status).toBe(404);
    expect(JSON.parse(await accessLine(withCors, refused))).toMatchObject({ status: 404, route: null });
  });

  it('sends no CORS headers when CORS_ORIGINS is unset', async () => {
    const answer = await rawRequest(withoutCors.baseUrl, 'GET', '/api/me', { origin: APP });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await preflight(withoutCors, '/api/agents', APP);
    expect(refused.status).not.toBe(204);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('leaves the codec routes their own rules: the Temporal UI with its cookie, nobody else', async () => {
    const ui = await preflight(withCors, '/api/temporal-codec/decode', UI);
    expect(ui.status).toBe(204);
    expect(ui.headers.get('access-control-allow-origin')).toBe(UI);
    expect(ui.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ui.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    // Listed in CORS_ORIGINS but not a Temporal UI: the API's CORS does not open the codec routes.
    const app = await preflight(withCors, '/api/temporal-codec/decode', APP);
    expect(app.headers.get('access-control-allow-origin')).toBeNull();
    const post = await rawRequest(withCors.baseUrl, 'POST', '/API/Temporal-Codec/decode', { origin: APP });
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('puts the usual security headers on API answers, and HSTS only when published over HTTPS', async () => {
    const https = await rawRequest(withCors.baseUrl, 'GET', '/api/me');
    const http = await rawRequest(withoutCors.baseUrl, 'GET', '/api/me');
    for (const answer of [https, http]) {
      expectError(answer, 'UNAUTHORIZED', 401);
      expectCommonHeaders(answer);
      const policy = answer.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(answer.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(answer.headers.get('x-permitted-cross-domain-policies')).toBe('none');
    }
    expect(https.headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect(http.headers.get('strict-transport-security')).toBeNull();
  });

  it("keeps the console's own policy on its page and the headers on its assets", async () => {
    const page = await rawRequest(withCors.baseUrl, 'GET', '/agents', { accept: 'text/html' });
    expect(page.status).toBe(200);
    expectCommonHeaders(page);
    // Exactly one policy, the console's: it runs its bundled scripts (the API's 'none' would break it).
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy.split(',')).toHaveLength(1);
    expect(policy).toMatch(/^default-src 'self'; script-src 'self'; style-src 'self';/);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    expect(script).toBeDefined();
    const asset = await rawRequest(withCors.baseUrl, 'GET', script!, { origin: APP });
    expect(asset.status).toBe(200);
    expectCommonHeaders(asset);
    // The console is same-origin: its files get no CORS headers even for a listed origin.
    expect(asset.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("gives the OpenAPI page a policy Swagger UI runs under, and keeps the OAuth callback page's own", async () => {
    const docs = await rawRequest(withoutCors.baseUrl, 'GET', '/api/docs', { accept: 'text/html' });
    expect(docs.status).toBe(200);
    expectCommonHeaders(docs);
    const docsPolicy = docs.headers.get('content-security-policy') ?? '';
    expect(docsPolicy).toContain("script-src 'self'");
    expect(docsPolicy).toContain("style-src 'self' 'unsafe-inline'");
    expect(docsPolicy).not.toContain("script-src 'self' 'unsafe-inline'");
    const callback = await rawRequest(withoutCors.baseUrl, 'GET', '/api/oauth/callback?code=c0de&state=st4te', {
      accept: 'text/html',
    });
    expect(callback.status).toBe(200);
    expect(callback.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(callback.headers.get('cache-control')).toBe('no-store');
    expect(callback.headers.get('referrer-policy')).toBe('no-referrer');
    expect(callback.headers.get('x-frame-options')).toBe('DENY');
  });

  it('signs the console in by an HttpOnly SameSite=Strict cookie: a state change needs its CSRF token, a bearer token does not', async () => {
    const http = new Http(withoutCors.baseUrl);
    const email = uniqueEmail('console');
    const registered = await http.post('/api/auth/console/register', { email, password: TEST_PASSWORD });
    expect(registered.status).toBe(201);
    expect(registered.body.user.email).toBe(email);
    // The token is in the HttpOnly cookie only: the answer gives a script nothing to steal.
    expect(registered.body.accessToken).toBeUndefined();
    expect(registered.text).not.toMatch(/eyJ/);
    const session = setCookie(registered, 'agentsite_session')!;
    const csrf = setCookie(registered, 'agentsite_csrf')!;
    expect(session).toMatchObject({ httponly: '', samesite: 'Strict', path: '/api' });
    expect(Number(session['max-age'])).toBeGreaterThan(0);
    // Served over http (the dev server, npm start): not Secure, or the browser would drop it.
    expect(session.secure).toBeUndefined();
    expect(csrf).toMatchObject({ samesite: 'Strict', path: '/' });
    expect(csrf.httponly).toBeUndefined();
    expect(csrf.value).not.toBe(session.value);
    const cookie = `agentsite_session=${session.value}; agentsite_csrf=${csrf.value}`;

    // Reading needs no CSRF token.
    const me = await http.get('/api/me', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(email);
    // A change without the header, with a wrong one, or with the cookie's name but another session's value: refused.
    const other = await http.post('/api/auth/console/login', { email, password: TEST_PASSWORD });
    const otherCsrf = setCookie(other, 'agentsite_csrf')!.value;
    const attempts: Array<Record<string, string>> = [
      { cookie },
      { cookie, 'x-csrf-token': 'forged' },
      { cookie, 'x-csrf-token': otherCsrf },
    ];
    for (const headers of attempts) {
      const refused = await http.post('/api/auth/accept-terms', {}, { headers });
      expectError(refused, 'PERMISSION_DENIED', 403);
      expect(refused.body.error).toMatch(/X-CSRF-Token/);
    }
    expect((await http.get('/api/me', { headers: { cookie } })).body.acceptedTermsAt).toBeNull();
    const accepted = await http.post('/api/auth/accept-terms', {}, { headers: { cookie, 'x-csrf-token': csrf.value } });
    expect(accepted.status).toBe(200);

    // Bearer clients: unchanged, no cookie set, no CSRF token needed (even with a console cookie beside).
    const client = await registerUser(http, { acceptTerms: false });
    const login = await http.post('/api/auth/login', { email: client.email, password: TEST_PASSWORD });
    expect(login.status).toBe(200);
    expect(typeof login.body.accessToken).toBe('string');
    expect(login.headers.getSetCookie()).toEqual([]);
    const bearer = await http.post('/api/auth/accept-terms', {}, { token: client.token, headers: { cookie } });
    expect(bearer.status).toBe(200);
    expect((await http.get('/api/me', { token: client.token })).body.email).toBe(client.email);

    // Sign-out: needs the CSRF token too, revokes the token and removes both cookies.
    expectError(await http.post('/api/auth/logout', undefined, { headers: { cookie } }), 'PERMISSION_DENIED', 403);
    const out = await http.post('/api/auth/logout', undefined, { headers: { cookie, 'x-csrf-token': csrf.value } });
    expect(out.status).toBe(204);
    expect(setCookie(out, 'agentsite_session')).toMatchObject({ value: '', 'max-age': '0', path: '/api' });
    expect(setCookie(out, 'agentsite_csrf')).toMatchObject({ value: '', 'max-age': '0', path: '/' });
    const after = await http.get('/api/me', { headers: { cookie } });
    expectError(after, 'TOKEN_REVOKED', 401);
    expect(setCookie(after, 'agentsite_session')).toMatchObject({ value: '', 'max-age': '0' });
  });

  it('makes the console cookies Secure when published over HTTPS', async () => {
    const http = new Http(withCors.baseUrl);
    const email = uniqueEmail('secure');
    expect((await http.post('/api/auth/register', { email, password: TEST_PASSWORD })).status).toBe(201);
    const login = await http.post('/api/auth/console/login', { email, password: TEST_PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.accessToken).toBeUndefined();
    for (const name of ['agentsite_session', 'agentsite_csrf']) {
      expect(setCookie(login, name)).toMatchObject({ samesite: 'Strict', secure: '' });
    }
    expect(setCookie(login, 'agentsite_session')?.httponly).toBe('');
  });
});
