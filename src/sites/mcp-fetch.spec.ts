import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestCa, issueServerCert } from '../../examples/site/tls.js';
import { AppError } from '../common/app-error.js';
import type { Settings } from '../config/settings.js';
import { guardedFetch } from './mcp-fetch.js';
import { SiteHttpClient } from './site-http.js';

describe('guardedFetch (the MCP SDK fetch)', () => {
  let server: https.Server;
  let http: SiteHttpClient;
  let port: number;
  const seen: Array<{ path: string; authorization?: string; method?: string }> = [];
  let release: () => void = () => undefined;

  beforeAll(async () => {
    const ca = await createTestCa();
    const cert = await issueServerCert(ca, ['localhost', '127.0.0.1']);
    server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, method: req.method });
      const other = `https://127.0.0.1:${port}`;
      switch (req.url) {
        case '/sse':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('event: message\ndata: first\n\n');
          release = () => res.end('event: message\ndata: last\n\n');
          return;
        case '/post-away':
          res.writeHead(307, { location: `${other}/landed` }).end();
          return;
        case '/get-away':
          res.writeHead(302, { location: `${other}/landed` }).end();
          return;
        case '/private':
          res.writeHead(302, { location: 'https://10.0.0.1/mcp' }).end();
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(4096));
          return;
        default:
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-fetch-')), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    http = new SiteHttpClient({
      siteCaCerts: caFile,
      siteAllowPrivateHosts: [`localhost:${port}`, `127.0.0.1:${port}`],
    } as Pick<Settings, 'siteCaCerts' | 'siteAllowPrivateHosts'>);
  });

  afterAll(async () => {
    http.onModuleDestroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('streams the body: the first event is read before the server ends the answer', async () => {
    const response = await guardedFetch(http)(`https://localhost:${port}/sse`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toContain('data: first');
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += Buffer.from(chunk.value).toString();
    }
    expect(rest).toContain('data: last');
  });

  it('refuses http:// and a private address that is not allow-listed, before any connection', async () => {
    const fetchFn = guardedFetch(http);
    await expect(fetchFn(`http://localhost:${port}/`)).rejects.toMatchObject({ code: 'INVALID_URL' });
    await expect(fetchFn('https://192.168.1.1/mcp')).rejects.toBeInstanceOf(AppError);
  });

  it('does not follow a POST to another origin, and follows a GET there without Authorization', async () => {
    const fetchFn = guardedFetch(http);
    const init = { method: 'POST', headers: { authorization: 'Bearer secret' }, body: '{}' };
    await expect(fetchFn(`https://localhost:${port}/post-away`, init)).rejects.toMatchObject({ kind: 'redirect' });
    expect(seen.filter((s) => s.path === '/landed')).toEqual([]);
    const answer = await fetchFn(`https://localhost:${port}/get-away`, { headers: { authorization: 'Bearer secret' } });
    expect(answer.status).toBe(200);
    expect(seen.filter((s) => s.path === '/landed')).toEqual([
      { path: '/landed', authorization: undefined, method: 'GET' },
    ]);
  });

  it('answers a redirect as it is when asked to (the SDK follows same-origin ones itself)', async () => {
    const answer = await guardedFetch(http)(`https://localhost:${port}/get-away`, { redirect: 'manual' });
    expect(answer.status).toBe(302);
  });

  it('refuses a redirect to a private address, followed or answered as it is', async () => {
    const fetchFn = guardedFetch(http);
    await expect(fetchFn(`https://localhost:${port}/private`)).rejects.toMatchObject({ code: 'INVALID_URL' });
    await expect(fetchFn(`https://localhost:${port}/private`, { redirect: 'manual' })).rejects.toMatchObject({
      code: 'INVALID_URL',
    });
  });

  it('fails a body over the size cap', async () => {
    const answer = await guardedFetch(http, { maxBytes: 1024 })(`https://localhost:${port}/big`);
    await expect(answer.text()).rejects.toBeDefined();
    const whole = await guardedFetch(http)(`https://localhost:${port}/big`);
    expect((await whole.text()).length).toBe(4096);
  });
});
