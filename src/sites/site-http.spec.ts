import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestCa, issueServerCert } from '../../examples/site/tls.js';
import type { Settings } from '../config/settings.js';
import { SiteHttpClient, SiteNetworkError } from './site-http.js';

/**
 * A site that drops a connection instead of answering, on request: the race of a kept-alive socket
 * that the server closes just as the client reuses it, made deterministic.
 */
describe('SiteHttpClient and kept-alive connections', () => {
  let server: https.Server;
  let client: SiteHttpClient;
  let base: string;
  let caFile: string;
  const seen = { connections: 0, answered: 0, dropped: 0 };
  /** Which request on a connection (1st, 2nd, …) the site drops instead of answering. */
  let dropNth: number | undefined;

  beforeAll(async () => {
    const ca = await createTestCa();
    const cert = await issueServerCert(ca, ['localhost']);
    server = https.createServer({ cert: cert.cert, key: cert.key, keepAliveTimeout: 60_000 });
    server.on('connection', () => (seen.connections += 1));
    server.on('request', (req, res) => {
      const socket = req.socket as Socket & { requests?: number };
      socket.requests = (socket.requests ?? 0) + 1;
      if (socket.requests === dropNth) {
        seen.dropped += 1;
        socket.destroy();
        return;
      }
      seen.answered += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    base = `https://localhost:${port}`;
    caFile = path.join(mkdtempSync(path.join(tmpdir(), 'site-http-')), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    client = newClient();
  });

  const newClient = () =>
    new SiteHttpClient({ siteCaCerts: caFile, siteAllowPrivateHosts: [new URL(base).host] } as Settings);

  afterAll(async () => {
    client.onModuleDestroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = () => client.request({ method: 'POST', url: `${base}/tools/x`, body: '{}' });

  it('repeats a request once on a new connection when the reused one was closed under it', async () => {
    Object.assign(seen, { connections: 0, answered: 0, dropped: 0 });
    dropNth = undefined;
    expect((await post()).status).toBe(200); // opens a connection and keeps it
    dropNth = 2; // the next request on that connection is dropped
    const second = await post();
    expect(second.status).toBe(200);
    expect(seen).toEqual({ connections: 2, answered: 2, dropped: 1 });
  });

  it('does not repeat a request whose fresh connection was dropped: that is the site failing', async () => {
    client.onModuleDestroy(); // no kept-alive connection left: the next request opens a new one
    client = newClient();
    Object.assign(seen, { connections: 0, answered: 0, dropped: 0 });
    dropNth = 1;
    const failure = await post().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(SiteNetworkError);
    expect((failure as SiteNetworkError).kind).toBe('network');
    expect(seen).toEqual({ connections: 1, answered: 0, dropped: 1 });
  });
});
