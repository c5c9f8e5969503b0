import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { Readable, Transform } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/client';
import { classifyNetworkError, SiteNetworkError } from './site-network-errors.js';
import { DEFAULT_TIMEOUT_MS, MAX_REDIRECTS, MAX_RESPONSE_BYTES, type SiteHttpClient } from './site-http.js';

// The `fetch` the MCP SDK is given for every request it makes (JSON-RPC POSTs, SSE streams,
// discovery of the authorization metadata): the same network rules as every other request to a site.

export type { FetchLike } from '@modelcontextprotocol/client';

export interface GuardedFetchOptions {
  /** Until the answer's headers, and then the longest silence on its body (an SSE stream may last). */
  timeoutMs?: number;
  /** The most bytes one answer's body may carry (streams included). */
  maxBytes?: number;
}

/** Headers that carry the user's credentials: never sent to another origin. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
/** Statuses a Response cannot carry a body with. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function bodyOf(init: RequestInit | undefined): string | Buffer | undefined {
  const body = init?.body;
  if (body === undefined || body === null) {
    return undefined;
  }
  if (typeof body === 'string') {
    return body;
  }
  if (body instanceof URLSearchParams) {
    return body.toString();
  }
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
    return Buffer.from(body as ArrayBuffer);
  }
  throw new TypeError('guardedFetch sends string, form or byte bodies only');
}

/** Counts the body's bytes and fails the stream past `maxBytes`. */
function capped(maxBytes: number, url: URL): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) {
        callback(new SiteNetworkError(`${url.host} answered more than ${maxBytes} bytes`, 'too_large'));
        return;
      }
      callback(null, chunk);
    },
  });
}

function toResponse(res: IncomingMessage, url: URL, maxBytes: number): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) {
      continue;
    }
    for (const one of Array.isArray(value) ? value : [value]) {
      headers.append(name, one);
    }
  }
  const status = res.statusCode ?? 0;
  if (NULL_BODY.has(status)) {
    res.resume();
    return new Response(null, { status, statusText: res.statusMessage, headers });
  }
  const body = Readable.toWeb(res.pipe(capped(maxBytes, url))) as ReadableStream<Uint8Array>;
  res.on('error', () => undefined);
  const response = new Response(body, { status, statusText: res.statusMessage, headers });
  Object.defineProperty(response, 'url', { value: url.toString() });
  return response;
}

/** One request over the guarded agent: resolves once the headers are in, the body streams. */
function once(
  http: SiteHttpClient,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  signal: AbortSignal | undefined,
  timeoutMs: number,
  maxBytes: number,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new SiteNetworkError('the request was aborted', 'aborted'));
      return;
    }
    const req = https.request(url, {
      method,
      headers: { 'user-agent': http.userAgent, ...headers },
      agent: http.agentFor(url),
      timeout: timeoutMs,
    });
    const onAbort = (): void => {
      req.destroy(new SiteNetworkError('the request was aborted', 'aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('timeout', () => {
      req.destroy(new SiteNetworkError(`${url.host} did not answer in time`, 'timeout'));
    });
    req.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err instanceof SiteNetworkError ? err : classifyNetworkError(err, url, maxBytes));
    });
    req.on('response', (res) => {
      res.on('close', () => signal?.removeEventListener('abort', onAbort));
      resolve(toResponse(res, url, maxBytes));
    });
    req.end(body);
  });
}

/**
 * The MCP SDK's fetch over the service's network rules: HTTPS only and every hop checked by
 * `assertSiteUrl` and connected through the SSRF-filtering agent (allow-list and extra CAs included);
 * the body streams (SSE works) under a size cap; a timeout until the headers and on silence; a redirect
 * followed by hand: `redirect: 'manual'` (the SDK's transport follows same-origin ones itself) answers
 * it as it is, otherwise a redirect to another origin is not followed for a POST and loses
 * Authorization and cookies for a GET.
 */
export function guardedFetch(http: SiteHttpClient, options: GuardedFetchOptions = {}): FetchLike {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_RESPONSE_BYTES;
  return async (input, init) => {
    let url = http.assertSiteUrl(input.toString());
    const origin = url.origin;
    let method = (init?.method ?? 'GET').toUpperCase();
    let headers = headerRecord(init?.headers);
    let body = bodyOf(init);
    const signal = init?.signal ?? undefined;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
      const response = await once(http, url, method, headers, body, signal, timeoutMs, maxBytes);
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null) {
        return response;
      }
      if (init?.redirect === 'manual') {
        // Answered as it is (the SDK's transport follows same-origin redirects itself), but a redirect to
        // a refused address is told as such: INVALID_URL rather than an unexplained redirect.
        http.assertSiteUrl(new URL(location, url).toString(), 'redirect');
        return response;
      }
      await response.body?.cancel().catch(() => undefined);
      if (init?.redirect === 'error') {
        throw new SiteNetworkError(`${url.host} redirected the request (${response.status}); not followed`, 'redirect');
      }
      const next = http.assertSiteUrl(new URL(location, url).toString(), 'redirect');
      if (next.origin !== origin) {
        if (method !== 'GET') {
          throw new SiteNetworkError(
            `${url.host} redirected the request (${response.status}) to another origin, ${next.origin}; not followed`,
            'redirect',
          );
        }
        headers = Object.fromEntries(
          Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())),
        );
      }
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      url = next;
    }
    throw new SiteNetworkError(`more than ${MAX_REDIRECTS} redirects`, 'network');
  };
}
