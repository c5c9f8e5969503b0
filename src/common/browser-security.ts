import helmet from 'helmet';
import { type NodeMiddleware, pathOf, vary } from './http.js';

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
 * CORS for the API (CORS_ORIGINS): only the listed origins, exactly; no credentials, because the API
 * authenticates by bearer token, never by cookie (the codec routes, which take a cookie, answer their
 * own origins themselves and are left alone here). Paths outside /api (the console, same-origin)
 * get nothing, and neither does a request from another origin. Paths are compared in lower case, as
 * routes are matched. A preflight from an allowed origin is answered here (204), before the routes.
 */
export function apiCors(scope: CorsScope): NodeMiddleware {
  const allowed = new Set(scope.origins);
  return (req, res, next) => {
    const path = pathOf(req).toLowerCase();
    const origin = req.headers.origin;
    const inApi = startsWithPrefix(path, '/api');
    const own = scope.ownRules.some((prefix) => startsWithPrefix(path, prefix));
    if (!inApi || own || origin === undefined || !allowed.has(origin)) {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    vary(res, 'Origin');
    res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(','));
    if (req.method?.toUpperCase() !== 'OPTIONS') {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Methods', CORS_METHODS.join(','));
    res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(','));
    res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    res.statusCode = 204;
    res.setHeader('Content-Length', '0');
    res.end();
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
  const api = helmet({ ...common, contentSecurityPolicy: { useDefaults: false, directives: API_POLICY } });
  const docs = helmet({ ...common, contentSecurityPolicy: { useDefaults: false, directives: DOCS_POLICY } });
  const docsPrefix = options.docsPath.toLowerCase();
  return (req, res, next) => {
    const handler = startsWithPrefix(pathOf(req).toLowerCase(), docsPrefix) ? docs : api;
    handler(req, res, next);
  };
}
