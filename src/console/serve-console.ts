import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import send from '@fastify/send';
import { type NodeMiddleware, type NodeRequest, type NodeResponse, pathOf } from '../common/http.js';

/** Where `npm run build` puts the console (dist/console, next to dist/src). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console', import.meta.url));

/** The console's page for the end of an OAuth connection (OAUTH_COMPLETE_URL's default). */
export const CONSOLE_OAUTH_COMPLETE_PATH = '/oauth/complete';

/**
 * Below this path the console shows an MCP client's consent page (`/connect/{uid}`, where the
 * service's authorization server sends the browser): the only pages that show an image from
 * elsewhere, the app's logo (https only).
 */
export const CONSOLE_CONSENT_PREFIX = '/connect/';

/** Where Stripe.js comes from, and what it needs: its script and frames, its API, its 3-D Secure frames. */
const STRIPE_JS_ORIGIN = 'https://js.stripe.com';
/** Stripe.js's own subdomains (its Elements), as Stripe's CSP guide lists them. */
const STRIPE_JS_SUBDOMAINS = 'https://*.js.stripe.com';
const STRIPE_API_ORIGIN = 'https://api.stripe.com';
const STRIPE_HOOKS_ORIGIN = 'https://hooks.stripe.com';

export interface ConsoleOptions {
  /**
   * The console may load Stripe.js for its card field (PAYMENT_PROVIDER=stripe with a publishable
   * key): its policy then allows Stripe's origins, and nothing else is added.
   */
  stripeJs: boolean;
}

/**
 * The console's Content-Security-Policy. It runs only its own bundled code: no inline script or
 * style, no other origin, no framing; images and sound may also come from data: URLs (an MCP tool's
 * result carries them as base64); with Stripe.js exactly the origins Stripe documents for it
 * (script and frames from js.stripe.com, frames from hooks.stripe.com, calls to api.stripe.com).
 */
export function consolePolicy(options: ConsoleOptions, page: { remoteImages?: boolean } = {}): string {
  const stripe = (...origins: string[]): string => (options.stripeJs ? ` ${origins.join(' ')}` : '');
  return [
    "default-src 'self'",
    `script-src 'self'${stripe(STRIPE_JS_ORIGIN, STRIPE_JS_SUBDOMAINS)}`,
    "style-src 'self'",
    // The consent page shows the MCP client's logo from the client's own https address.
    `img-src 'self' data:${page.remoteImages === true ? ' https:' : ''}`,
    // An MCP tool's result may carry sound (base64): the try-out form plays it from a data: URL.
    "media-src 'self' data:",
    `connect-src 'self'${stripe(STRIPE_API_ORIGIN)}`,
    ...(options.stripeJs
      ? [`frame-src 'self' ${STRIPE_JS_ORIGIN} ${STRIPE_JS_SUBDOMAINS} ${STRIPE_HOOKS_ORIGIN}`]
      : []),
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The console's page headers. The OAuth completion page carries a code in its address, the consent
 * page its request's id: no Referer ever leaves. The consent page leaves the console with a
 * top-level navigation (window.location.assign) to the service's authorization endpoint, which
 * redirects to the MCP client's redirect URI: no form is submitted, so `form-action 'self'` does
 * not govern it, and no directive of CSP restricts a top-level navigation (`navigate-to` never
 * shipped).
 */
function consoleHeaders(options: ConsoleOptions, page: { remoteImages?: boolean } = {}): Record<string, string> {
  return {
    'content-security-policy': consolePolicy(options, page),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}

export function consoleIsBuilt(dir = CONSOLE_DIR): boolean {
  return existsSync(path.join(dir, 'index.html'));
}

/**
 * Serves the console at `/`: its hashed assets (cached for a year), and its page for every other
 * GET that a browser makes outside /api (the console routes in the browser). Anything else, and
 * an asset that does not exist, falls through to the API's NOT_FOUND.
 */
export function serveConsole(options: ConsoleOptions, dir = CONSOLE_DIR): NodeMiddleware[] {
  if (!consoleIsBuilt(dir)) {
    return [];
  }
  const page = readFileSync(path.join(dir, 'index.html'));
  const assetsDir = path.join(dir, 'assets');
  const headers = consoleHeaders(options);
  const consentHeaders = consoleHeaders(options, { remoteImages: true });
  const withHeaders = (req: NodeRequest, res: NodeResponse): void => {
    const consent = pathOf(req).toLowerCase().startsWith(CONSOLE_CONSENT_PREFIX);
    for (const [name, value] of Object.entries(consent ? consentHeaders : headers)) {
      res.setHeader(name, value);
    }
  };
  // The hashed assets, cached for a year; a file that does not exist (or any other method) falls
  // through to the API's NOT_FOUND.
  const assetsRoute: NodeMiddleware = (req, res, next) => {
    if (!pathOf(req).startsWith('/assets/') || (req.method !== 'GET' && req.method !== 'HEAD')) {
      next();
      return;
    }
    send(req, pathOf(req).slice('/assets'.length), {
      root: assetsDir,
      immutable: true,
      maxAge: '365d',
      index: false,
      dotfiles: 'ignore',
    }).then(
      (result) => {
        if (result.type !== 'file') {
          result.stream.destroy();
          next();
          return;
        }
        res.statusCode = result.statusCode;
        for (const [name, value] of Object.entries(result.headers)) {
          res.setHeader(name, value);
        }
        res.setHeader('x-content-type-options', 'nosniff');
        result.stream.on('error', () => res.destroy());
        result.stream.pipe(res);
      },
      (err: unknown) => next(err),
    );
  };
  const pageRoute: NodeMiddleware = (req, res, next) => {
    const path = pathOf(req);
    // Routes match in any case: /API/... is the API's.
    const lower = path.toLowerCase();
    const isApi = lower === '/api' || lower.startsWith('/api/');
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isApi || path.startsWith('/assets/')) {
      next();
      return;
    }
    // `/` is the console for anyone; any other path only for a browser (it names text/html), so
    // that an API client mistyping a path still gets the API's NOT_FOUND.
    const browser = /\btext\/html\b/i.test(req.headers.accept ?? '');
    if (path !== '/' && !browser) {
      next();
      return;
    }
    withHeaders(req, res);
    res.setHeader('cache-control', 'no-cache');
    res.statusCode = 200;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-length', page.length);
    res.end(req.method === 'HEAD' ? undefined : page);
  };
  return [assetsRoute, pageRoute];
}
