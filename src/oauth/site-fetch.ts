import type { SiteHttpClient } from '../sites/site-http.js';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** A Fetch-API-shaped function (what openid-client and the MCP SDK's auth functions take). */
export type SiteFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A Fetch-API-shaped function over SiteHttpClient (HTTPS only, SSRF guard, test CA, redirects
 * re-checked): every request of the OAuth flows goes through it. Bodies are small (forms and JSON).
 */
export function siteFetchOf(http: SiteHttpClient, timeoutMs = 15_000): SiteFetch {
  return async (url, init = {}) => {
    const raw = init.body;
    const body =
      raw === undefined || raw === null
        ? undefined
        : typeof raw === 'string'
          ? raw
          : raw instanceof URLSearchParams
            ? raw.toString()
            : Buffer.from(raw as ArrayBuffer).toString('utf8');
    const response = await http.request({
      method: init.method === 'GET' || init.method === undefined ? (body === undefined ? 'GET' : 'POST') : 'POST',
      url: url.toString(),
      headers: Object.fromEntries(new Headers(init.headers)),
      body,
      signal: init.signal ?? undefined,
      timeoutMs,
    });
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : new Uint8Array(response.body), {
      status: response.status,
      headers: response.headers,
    });
  };
}
