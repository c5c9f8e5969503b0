import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestCa, issueServerCert } from '../../examples/site/tls.js';
import type { Settings } from '../config/settings.js';
import { AppError } from '../common/app-error.js';
import { guardedLookup, publicNetworkMessage, SiteHttpClient, SiteNetworkError } from './site-http.js';

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

/**
 * A site with an open redirect, and a second origin (another HTTPS listener: another port is another
 * origin) that records everything it receives.
 */
describe('SiteHttpClient and redirects to another origin', () => {
  let site: https.Server;
  let elsewhere: https.Server;
  let client: SiteHttpClient;
  let siteBase: string;
  let elsewhereBase: string;
  const received: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
  /** What the redirecting site answers: the status and where to. */
  let redirect = { status: 307, to: '' };
  let siteCaFile: string;

  const listen = async (server: https.Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `https://localhost:${(server.address() as { port: number }).port}`;
  };

  beforeAll(async () => {
    const ca = await createTestCa();
    const cert = await issueServerCert(ca, ['localhost']);
    const record = (req: IncomingMessage, done: (body: string) => void) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => done(body));
    };
    site = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      record(req, (body) => {
        if (req.url?.startsWith('/same')) {
          received.push({ method: req.method ?? '', url: req.url, headers: req.headers, body });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"same":true}');
          return;
        }
        res.writeHead(redirect.status, { location: redirect.to }).end();
      });
    });
    elsewhere = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      record(req, (body) => {
        received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"elsewhere":true}');
      });
    });
    siteBase = await listen(site);
    elsewhereBase = await listen(elsewhere);
    const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'site-http-')), 'ca.pem');
    writeFileSync(caFile, ca.cert);
    siteCaFile = caFile;
    client = new SiteHttpClient({
      siteCaCerts: caFile,
      siteAllowPrivateHosts: [new URL(siteBase).host, new URL(elsewhereBase).host],
    } as Settings);
  });

  afterAll(async () => {
    client.onModuleDestroy();
    await Promise.all([site, elsewhere].map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const credentials = { authorization: 'Bearer secret-token', cookie: 'session=secret-cookie' };

  it.each([307, 308, 302, 303, 301])(
    'does not follow a POST redirected (%i) to another origin: the other origin receives nothing',
    async (status) => {
      received.length = 0;
      redirect = { status, to: `${elsewhereBase}/steal` };
      const failure = await client
        .request({ method: 'POST', url: `${siteBase}/api/tools/x`, headers: credentials, body: '{"secret":1}' })
        .catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(SiteNetworkError);
      expect((failure as SiteNetworkError).kind).toBe('redirect');
      expect((failure as Error).message).toContain(`redirected the request (${status}) to another origin`);
      expect((failure as Error).message).toContain(elsewhereBase);
      expect(received).toEqual([]);
    },
  );

  it('with private addresses allowed (agentsite-check --allow-private), still never follows a redirect to a metadata or link-local address', async () => {
    const local = new SiteHttpClient({
      siteCaCerts: siteCaFile,
      siteAllowPrivateHosts: [],
      allowPrivateAddresses: true,
    });
    try {
      for (const to of [
        'https://169.254.169.254/latest/meta-data/',
        'https://[fd00:ec2::254]/latest/meta-data/',
        'https://metadata.google.internal/computeMetadata/v1/',
        'https://[fe80::1]/',
      ]) {
        redirect = { status: 302, to };
        const failure = await local
          .request({ method: 'GET', url: `${siteBase}/manifest`, timeoutMs: 2_000 })
          .catch((err: unknown) => err);
        expect(failure).toBeInstanceOf(AppError);
        expect(failure).toMatchObject({
          code: 'INVALID_URL',
          message: expect.stringMatching(/link-local or cloud metadata/),
        });
      }
    } finally {
      local.onModuleDestroy();
    }
  });

  it('follows a GET to another origin without Authorization or cookies', async () => {
    received.length = 0;
    redirect = { status: 302, to: `${elsewhereBase}/manifest` };
    const answer = await client.request({
      method: 'GET',
      url: `${siteBase}/.well-known/agentsite.json`,
      headers: { ...credentials, accept: 'application/json' },
    });
    expect(answer.status).toBe(200);
    expect(answer.url).toBe(`${elsewhereBase}/manifest`);
    expect(received).toHaveLength(1);
    expect(received[0]!.headers.authorization).toBeUndefined();
    expect(received[0]!.headers.cookie).toBeUndefined();
    expect(received[0]!.headers.accept).toBe('application/json');
  });

  it('keeps method, body and credentials on a 307 within the same origin', async () => {
    received.length = 0;
    redirect = { status: 307, to: `${siteBase}/same/place` };
    const answer = await client.request({
      method: 'POST',
      url: `${siteBase}/api/tools/x`,
      headers: credentials,
      body: '{"a":1}',
    });
    expect(answer.status).toBe(200);
    expect(received).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/same/place',
        body: '{"a":1}',
        headers: expect.objectContaining({ authorization: 'Bearer secret-token', cookie: 'session=secret-cookie' }),
      }),
    ]);
  });
});

describe('publicNetworkMessage', () => {
  it('tells users the gist of a refused connection, never the address and port the socket reported', async () => {
    // A port that was just free: nothing listens there, so the connection is refused for real.
    const probe = https.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const client = new SiteHttpClient({ siteAllowPrivateHosts: [`127.0.0.1:${port}`] } as Settings);
    let caught: unknown;
    try {
      await client.request({ method: 'GET', url: `https://127.0.0.1:${port}/x`, timeoutMs: 5_000 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SiteNetworkError);
    // The raw error names the socket; the public words do not.
    expect(`${(caught as Error).message} ${String((caught as Error).cause)}`).toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    const message = publicNetworkMessage(caught as SiteNetworkError);
    expect(message).toBe('the site refused the connection');
    expect(message).not.toContain(String(port));
  });

  it('keeps the words the service itself wrote about timeouts and redirects', () => {
    expect(publicNetworkMessage(new SiteNetworkError('site.example did not answer within 5000 ms', 'timeout'))).toBe(
      'site.example did not answer within 5000 ms',
    );
    expect(publicNetworkMessage(new SiteNetworkError('a redirect to another origin is not followed', 'redirect'))).toBe(
      'a redirect to another origin is not followed',
    );
    expect(
      publicNetworkMessage(new SiteNetworkError('boom 10.1.2.3:5432', 'network', { cause: { code: 'EWEIRD' } })),
    ).toBe('the site could not be reached');
  });
});

describe('SiteHttpClient.assertSiteUrl', () => {
  const client = new SiteHttpClient({ siteAllowPrivateHosts: ['10.0.0.7'] } as unknown as Settings);
  afterAll(() => client.onModuleDestroy());

  it('refuses every notation of a non-public IP literal and passes public ones and host names', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
      'https://169.254.169.254/',
      'https://[fd00::1]/',
      'https://0.0.0.0/',
    ]) {
      expect(() => client.assertSiteUrl(url)).toThrow(/non-public address/);
    }
    for (const url of ['https://93.184.215.14/', 'https://[2606:4700::1111]/', 'https://notes.example.com/']) {
      expect(client.assertSiteUrl(url).href).toBe(url);
    }
    // Allow-listed: accepted although private.
    expect(client.assertSiteUrl('https://10.0.0.7/').hostname).toBe('10.0.0.7');
  });

  it('refuses link-local and metadata addresses even where private ones are allowed (an allow-list, --allow-private)', () => {
    const listed = new SiteHttpClient({
      siteAllowPrivateHosts: ['169.254.169.254', 'metadata.google.internal', '[fe80::1]'],
    } as unknown as Settings);
    const open = new SiteHttpClient({ siteAllowPrivateHosts: [], allowPrivateAddresses: true } as unknown as Settings);
    try {
      for (const c of [listed, open]) {
        for (const url of [
          'https://169.254.169.254/',
          'https://169.254.0.1/',
          'https://2852039166/',
          'https://[::ffff:169.254.169.254]/',
          'https://[fe80::1]/',
          'https://[fd00:ec2::254]/',
          'https://[fd00:ec2:0:0:0:0:0:254]/',
          'https://metadata.google.internal/',
          'https://METADATA.google.internal./',
        ]) {
          expect(() => c.assertSiteUrl(url)).toThrow(/non-public address \(link-local or cloud metadata\)/);
        }
      }
      // Other private addresses stay allowed where they were.
      for (const url of ['https://127.0.0.1/', 'https://10.0.0.1/', 'https://[fd00::1]/', 'https://localhost/']) {
        expect(open.assertSiteUrl(url).href).toBe(url);
      }
    } finally {
      listed.onModuleDestroy();
      open.onModuleDestroy();
    }
  });

  it('refuses, after DNS, a host name that resolves to a link-local or metadata address', async () => {
    const resolve =
      (...addresses: string[]) =>
      (
        _host: string,
        _options: unknown,
        cb: (err: null, addresses: Array<{ address: string; family: number }>) => void,
      ) =>
        cb(
          null,
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
    const lookup = (fake: ReturnType<typeof resolve>, all: boolean) =>
      new Promise<{ err: Error | null; address: unknown }>((done) =>
        guardedLookup('sneaky.example', { all }, (err, address) => done({ err, address }), fake as never),
      );
    for (const bad of [['169.254.169.254'], ['93.184.215.14', 'fd00:ec2::254'], ['fe80::2']]) {
      const { err } = await lookup(resolve(...bad), false);
      expect(err?.message).toMatch(/is not allowed\. Because/);
    }
    expect((await lookup(resolve('10.0.0.1'), false)).address).toBe('10.0.0.1');
    expect((await lookup(resolve('10.0.0.1', '::1'), true)).address).toHaveLength(2);
  });
});
