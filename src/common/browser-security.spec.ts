import { describe, expect, it } from '@jest/globals';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import helmet from 'helmet';
import { apiCorsOptions, securityHeaders } from './browser-security.js';
import { inOrder, type NodeMiddleware } from './http.js';

function exchange(url: string): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.url = url;
  req.method = 'GET';
  return { req, res: new ServerResponse(req) };
}

/** The headers `middleware` leaves on a fresh response for `url`. */
function headersAfter(middleware: NodeMiddleware, url: string): Record<string, unknown> {
  const { req, res } = exchange(url);
  res.setHeader('X-Powered-By', 'something');
  let called = 0;
  middleware(req, res, () => (called += 1));
  expect(called).toBe(1);
  return res.getHeaders();
}

describe('securityHeaders', () => {
  it("sets exactly what helmet itself sets with the same options, on API paths and the docs' own", () => {
    const ours = securityHeaders({ https: true, docsPath: '/api/docs' });
    const common = {
      strictTransportSecurity: { maxAge: 365 * 24 * 3600, includeSubDomains: false },
      xFrameOptions: { action: 'deny' as const },
      referrerPolicy: { policy: 'no-referrer' as const },
    };
    const api = helmet({
      ...common,
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          'default-src': ["'none'"],
          'base-uri': ["'none'"],
          'form-action': ["'none'"],
          'frame-ancestors': ["'none'"],
        },
      },
    });
    const direct = headersAfter((req, res, next) => api(req, res, next), '/api/me');
    expect(headersAfter(ours, '/api/me')).toEqual(direct);
    expect(direct['x-powered-by']).toBeUndefined();
    expect(direct['strict-transport-security']).toBe('max-age=31536000');
    const docs = headersAfter(ours, '/API/Docs/openapi.json');
    expect(docs['content-security-policy']).toContain("script-src 'self'");
    expect(headersAfter(ours, '/api/docsx')['content-security-policy']).toBe(direct['content-security-policy']);
  });
});

describe('inOrder', () => {
  it('runs each middleware after the one before, and stops at the first error', () => {
    const seen: string[] = [];
    const step =
      (name: string, err?: Error): NodeMiddleware =>
      (_req, _res, next) => {
        seen.push(name);
        next(err);
      };
    const { req, res } = exchange('/');
    const done: unknown[] = [];
    inOrder([step('a'), step('b'), step('c')])(req, res, (err) => done.push(err));
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(done).toEqual([undefined]);
    const failure = new Error('refused');
    seen.length = 0;
    inOrder([step('a'), step('b', failure), step('c')])(req, res, (err) => done.push(err));
    expect(seen).toEqual(['a', 'b']);
    expect(done).toEqual([undefined, failure]);
  });
});

describe('apiCorsOptions', () => {
  const options = apiCorsOptions({ origins: ['https://app.example'], ownRules: ['/api/temporal-codec'] });
  const resolve = (url: string, origin?: string): FastifyCorsOptions => {
    let resolved: FastifyCorsOptions | undefined;
    const req = { raw: { url }, headers: origin === undefined ? {} : { origin } } as unknown as FastifyRequest;
    const delegator = options.delegator as (
      req: FastifyRequest,
      cb: (err: Error | null, options?: FastifyCorsOptions) => void,
    ) => void;
    delegator(req, (_err, found) => (resolved = found));
    return resolved!;
  };

  it('turns CORS on for a listed origin under /api, in any letter case', () => {
    for (const url of ['/api/agents', '/API/Agents?x=1', '/api']) {
      const found = resolve(url, 'https://app.example');
      expect(found.origin).toEqual(['https://app.example']);
      expect(found.credentials).toBeUndefined();
      expect(found.maxAge).toBe(600);
      expect(found.strictPreflight).toBe(false);
    }
  });

  it('turns it off for other origins, paths outside /api and the codec routes', () => {
    expect(resolve('/api/agents', 'https://other.example').origin).toBe(false);
    expect(resolve('/api/agents').origin).toBe(false);
    expect(resolve('/apix', 'https://app.example').origin).toBe(false);
    expect(resolve('/assets/x.js', 'https://app.example').origin).toBe(false);
    expect(resolve('/api/Temporal-Codec/decode', 'https://app.example').origin).toBe(false);
  });
});
