import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Browser, chromium, type Page } from 'playwright-core';
import { TEST_ENV } from '../setup/shared-runtime.js';
import { Http } from '../utils/http.js';
import { Stack } from '../utils/stack.js';
import { registerUser, TEST_PASSWORD, type TestUser } from '../utils/users.js';

/** A front end of another origin: an empty page, from which the test's scripts call the API. */
async function frontEnd(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>front end</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface CallResult {
  ok: boolean;
  status?: number;
  requestId?: string | null;
  body?: unknown;
  error?: string;
}

/** From the page: a token-bearing GET and a JSON POST to the API, as a front end's code would make them. */
function callApi(page: Page, api: string, user: TestUser): Promise<CallResult[]> {
  return page.evaluate(
    async ({ api, token, email, password }) => {
      const attempt = async (run: () => Promise<Response>): Promise<CallResult> => {
        try {
          const res = await run();
          return {
            ok: true,
            status: res.status,
            requestId: res.headers.get('x-correlation-id'),
            body: await res.json(),
          };
        } catch (err) {
          return { ok: false, error: String(err) };
        }
      };
      return [
        await attempt(() =>
          fetch(`${api}/api/me`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'front-end-call-1' } }),
        ),
        await attempt(() =>
          fetch(`${api}/api/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password }),
          }),
        ),
      ];
    },
    { api, token: user.token, email: user.email, password: TEST_PASSWORD },
  );
}

describe('the API called from a page of another origin, in Chromium (CORS_ORIGINS)', () => {
  let browser: Browser;
  let stack: Stack;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  let user: TestUser;

  beforeAll(async () => {
    const executablePath = process.env[TEST_ENV.chromium];
    if (executablePath === undefined) {
      throw new Error(process.env[TEST_ENV.chromiumProblem] ?? 'No Chromium: run the browser suites with "npm test"');
    }
    [allowed, other] = await Promise.all([frontEnd(), frontEnd()]);
    stack = await Stack.start({ worker: false, env: { CORS_ORIGINS: allowed.origin } });
    user = await registerUser(new Http(stack.baseUrl));
    browser = await chromium.launch({ executablePath, headless: true });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    allowed?.server.close();
    other?.server.close();
  });

  it('lets the listed origin call with a bearer token and JSON, and read the answer and its ids', async () => {
    const page = await browser.newPage();
    await page.goto(`${allowed.origin}/`);
    const [me, login] = await callApi(page, stack.baseUrl, user);
    expect(me).toMatchObject({ ok: true, status: 200, body: { email: user.email } });
    expect(me!.requestId).toBeTruthy();
    expect(login).toMatchObject({ ok: true, status: 200 });
    expect((login!.body as { accessToken?: string }).accessToken).toBeTruthy();
    await page.close();
  });

  it('keeps every answer from a page of any other origin', async () => {
    const page = await browser.newPage();
    await page.goto(`${other.origin}/`);
    const results = await callApi(page, stack.baseUrl, user);
    for (const result of results) {
      expect(result.ok).toBe(false);
      expect(result.error).toContain('Failed to fetch');
    }
    await page.close();
  });

  it('runs the OpenAPI page (Swagger UI) under its policy, with no violation', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) {
        violations.push(message.text());
      }
    });
    const answer = await page.goto(`${stack.baseUrl}/api/docs`);
    expect(answer?.headers()['content-security-policy']).toContain("style-src 'self' 'unsafe-inline'");
    // Swagger UI renders the document's operations: its scripts ran and it fetched the document.
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    expect(violations).toEqual([]);
    await page.close();
  });
});
