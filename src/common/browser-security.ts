import type { FastifyCorsOptions } from '@fastify/cors';
import type { ServerResponse } from 'node:http';
import helmet from 'helmet';
import { type NodeMiddleware, pathOf } from './http.js';

/** How long a browser may reuse a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** What a browser on an allowed origin may send: the API's own headers and the webhook's. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Workspace-Id',
  'X-Request-Id',
  'X-Correlation-Id',
  'X-Webhook-Secret',
  'X-Webhook-Delivery-Id',
];

/** Answer headers its scripts may read besides the safelisted ones (ids to quote, when to retry). */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'X-Correlation-Id', 'Retry-After'];

/** Below this path prefix some routes keep their own CORS rules (the codec endpoint's, with its cookie). */
export interface CorsScope {
  origins: readonly string[];
  /** Path prefixes (lower case) the API's CORS leaves alone. */
  ownRules: readonly string[];
}

const startsWithPrefix = (path: string, prefix: string): boolean => path === prefix || path.startsWith(`${prefix}/`);

/** The methods a preflight allows, as the answer lists them. */
const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * CORS for the API (CORS_ORIGINS), as @fastify/cors options (app.enableCors): only the listed
 * origins, exactly; no credentials, because the API authenticates by bearer token, never by cookie
 * (the codec routes, which take a cookie, answer their own origins themselves and are left alone
 * here). Paths outside /api (the console, same-origin) get no CORS headers, and neither does a
 * request from another origin. Paths are compared in lower case, as routes are matched. A preflight
 * from an allowed origin is answered 204 in the library's request hook, which the adapter runs after
 * the request id, access log, metrics and security headers (app.factory.ts) and before middleware,
 * guards and routes; a preflight without Access-Control-Request-Method is answered the same (not
 * the library's strict 400, which would not be the API's error body).
 */
export function apiCorsOptions(scope: CorsScope): FastifyCorsOptions {
  const allowed = new Set(scope.origins);
  const inScope: FastifyCorsOptions = {
    origin: [...scope.origins],
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    strictPreflight: false,
  };
  // The library would answer any origin's preflight 204 (without Access-Control-Allow-Origin): an
  // unlisted origin gets CORS turned off instead, so its preflight goes on to NOT_FOUND.
  const outOfScope: FastifyCorsOptions = { origin: false };
  return {
    delegator: (req, callback) => {
      const origin = req.headers.origin;
      if (origin === undefined || !allowed.has(origin)) {
        callback(null, outOfScope);
        return;
      }
      const path = pathOf(req.raw).toLowerCase();
      const own = scope.ownRules.some((prefix) => startsWithPrefix(path, prefix));
      callback(null, startsWithPrefix(path, '/api') && !own ? inScope : outOfScope);
    },
  };
}

/**
 * What an API answer (JSON) may do in a browser: nothing. A page that renders one by mistake runs
 * no script, loads nothing and cannot be framed.
 */
const API_POLICY = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
};

/**
 * The OpenAPI page (Swagger UI): its own scripts, its inline styles and data: images, nothing from
 * elsewhere; it calls the API on this origin only.
 */
const DOCS_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/**
 * The usual security headers on every answer (helmet): nosniff, no framing, no Referer, no
 * cross-origin embedding of answers, and HSTS when the service is published over HTTPS (over plain
 * HTTP the header would be ignored, and on localhost it would pin other local services to HTTPS).
 * Routes that serve pages set their own Content-Security-Policy after this (the console, the OAuth
 * callback's page, the codec sign-in form): theirs replace the API's.
 */
export function securityHeaders(options: { https: boolean; docsPath: string }): NodeMiddleware {
  const common = {
    // The service does not own its parent domain's other hosts: HSTS for this host only.
    strictTransportSecurity: options.https ? { maxAge: 365 * 24 * 3600, includeSubDomains: false } : false,
    xFrameOptions: { action: 'deny' as const },
    referrerPolicy: { policy: 'no-referrer' as const },
  };
  const api = helmetHeaders(
    helmet({ ...common, contentSecurityPolicy: { useDefaults: false, directives: API_POLICY } }),
  );
  const docs = helmetHeaders(
    helmet({ ...common, contentSecurityPolicy: { useDefaults: false, directives: DOCS_POLICY } }),
  );
  const docsPrefix = options.docsPath.toLowerCase();
  return (req, res, next) => {
    const headers = startsWithPrefix(pathOf(req).toLowerCase(), docsPrefix) ? docs : api;
    for (const [name, value] of headers) {
      res.setHeader(name, value);
    }
    res.removeHeader('x-powered-by');
    next();
  };
}

/**
 * The headers a helmet middleware sets, read once: with these options they do not depend on the
 * request (no nonces), so each request gets the list set in one loop rather than through helmet's
 * dozen middleware functions.
 */
function helmetHeaders(middleware: ReturnType<typeof helmet>): [string, string][] {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), String(value)),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  } as unknown as ServerResponse;
  let failure: unknown;
  middleware({} as never, recorder, (err?: unknown) => {
    failure = err;
  });
  if (failure !== undefined || headers.size === 0) {
    throw new Error(`helmet set no headers: ${String(failure)}`);
  }
  return [...headers];
}
