import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, Http } from '../utils/http.js';
import { Stack } from '../utils/stack.js';

/** A GET outside the fetch wrapper, as a browser sends it (the console's pages are no API answers). */
function browserGet(baseUrl: string, path: string, accept = 'text/html,application/xhtml+xml,*/*;q=0.8') {
  const { hostname, port } = new URL(baseUrl);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>(
    (resolve, reject) => {
      const req = httpRequest({ host: hostname, port, path, headers: { accept }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** The console's policy on a server that does not load Stripe.js: its own code only. */
const OWN_CODE_ONLY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; " +
  "connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The Stripe settings a stack needs to boot with PAYMENT_PROVIDER=stripe (nothing calls Stripe here). */
const STRIPE_ENV = {
  PAYMENT_PROVIDER: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_console',
  STRIPE_WEBHOOK_SECRET: 'whsec_console',
  STRIPE_PRICE_PRO: 'price_pro',
  STRIPE_PRICE_HARNESS: 'price_harness',
  STRIPE_PRICE_TEAM: 'price_team',
};

async function consolePolicyOf(baseUrl: string): Promise<string> {
  const page = await browserGet(baseUrl, '/billing');
  expect(page.status).toBe(200);
  return String(page.headers['content-security-policy']);
}

describe('the console, served by the API (e2e)', () => {
  let stack: Stack;
  let http: Http;

  beforeAll(async () => {
    stack = await Stack.start({ worker: false });
    http = new Http(stack.baseUrl);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('serves its page at / and at every console address a browser opens, with a strict policy', async () => {
    for (const path of ['/', '/vault', '/agents/123/edit', '/oauth/complete?code=c&state=s']) {
      const page = await browserGet(stack.baseUrl, path);
      expect({ path, status: page.status }).toEqual({ path, status: 200 });
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<div id="root"></div>');
      const policy = String(page.headers['content-security-policy']);
      expect(policy).toBe(OWN_CODE_ONLY);
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['x-frame-options']).toBe('DENY');
    }
    // `/` is the console for any client; curl asks for */*.
    expect((await browserGet(stack.baseUrl, '/', '*/*')).status).toBe(200);
  });

  it('serves its hashed assets for a year and refuses unknown ones with NOT_FOUND', async () => {
    const page = await browserGet(stack.baseUrl, '/');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    expect(script).toBeDefined();
    const asset = await browserGet(stack.baseUrl, script!, '*/*');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toContain('immutable');
    const missing = await browserGet(stack.baseUrl, '/assets/no-such-file.js', '*/*');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ code: 'NOT_FOUND', statusCode: 404 });
  });

  it('leaves the API its own answers: unknown API routes, API clients and other methods get NOT_FOUND', async () => {
    // A browser asking for an unknown API route still gets the API's error, not the console.
    const api = await browserGet(stack.baseUrl, '/api/no-such-route');
    expect(api.status).toBe(404);
    expect(JSON.parse(api.text)).toMatchObject({ code: 'NOT_FOUND' });
    expectError(await http.get('/vault'), 'NOT_FOUND', 404);
    expectError(await http.request('POST', '/vault', { body: {} }), 'NOT_FOUND', 404);
    // The API itself is unchanged.
    const doc = await http.get('/api/docs/openapi.json');
    expect(doc.status).toBe(200);
  });
});

describe('the console under PAYMENT_PROVIDER=stripe (e2e)', () => {
  it('allows exactly the origins of Stripe.js when a publishable key is set, and nothing more without one', async () => {
    const withKey = await Stack.start({
      worker: false,
      env: { ...STRIPE_ENV, STRIPE_PUBLISHABLE_KEY: 'pk_test_console' },
    });
    try {
      expect(await consolePolicyOf(withKey.baseUrl)).toBe(
        "default-src 'self'; script-src 'self' https://js.stripe.com https://*.js.stripe.com; style-src 'self'; img-src 'self' data:; " +
          "media-src 'self' data:; connect-src 'self' https://api.stripe.com; frame-src 'self' https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com; " +
          "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      );
      // The API's own answers keep their policy: Stripe's origins are for the console's page only.
      const api = await new Http(withKey.baseUrl).get('/api/health');
      expect(String(api.headers.get('content-security-policy'))).not.toContain('stripe');
    } finally {
      await withKey.stop();
    }
    const withoutKey = await Stack.start({ worker: false, env: STRIPE_ENV });
    try {
      expect(await consolePolicyOf(withoutKey.baseUrl)).toBe(OWN_CODE_ONLY);
    } finally {
      await withoutKey.stop();
    }
  });
});
