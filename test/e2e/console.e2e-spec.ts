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
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain('unsafe-inline');
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
