import https from 'node:https';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import axios from 'axios';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { AppError } from '../common/app-error.js';
import { readPackageVersion } from '../common/version.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { alwaysBlockedHost, guardedLookup } from './address-guard.js';
import { classifyNetworkError, SiteNetworkError, staleKeepAlive } from './site-network-errors.js';

export { alwaysBlockedAddress, alwaysBlockedHost, guardedLookup } from './address-guard.js';
export { publicNetworkMessage, SiteNetworkError } from './site-network-errors.js';

export const MAX_REDIRECTS = 5;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export interface SiteRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** `manual`: a redirect is answered as it is, not followed (the conformance check reads a consent page's redirect). */
  redirect?: 'follow' | 'manual';
}

export interface SiteResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
}

/**
 * What the client needs of the settings. The service passes its Settings; the conformance CLI builds
 * one from its flags, and only it may set `allowPrivateAddresses` (no setting reads it).
 */
export type SiteHttpSettings = Pick<Settings, 'siteCaCerts' | 'siteAllowPrivateHosts'> & {
  allowPrivateAddresses?: boolean;
};

/** Headers that carry the user's credentials: never sent to an origin other than the one they were meant for. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

function withoutCredentials(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (headers === undefined) {
    return undefined;
  }
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())),
  );
}

/**
 * Every request the service makes to a site (manifest, tools, OAuth token endpoint) goes through here:
 * HTTPS only; the resolved address of every connection must be public (request-filtering-agent checks
 * it at connect time, after DNS, so rebinding cannot slip through) unless the host is allow-listed;
 * redirects are followed by hand so each hop is checked again; extra CA certificates are trusted.
 */
@Injectable()
export class SiteHttpClient implements OnModuleDestroy {
  private readonly strictAgent: https.Agent;
  private readonly allowListedAgent: https.Agent;
  private readonly allowList: Set<string>;
  private readonly allowPrivate: boolean;
  readonly userAgent = `agentsite/${readPackageVersion()}`;

  constructor(@Inject(SETTINGS) settings: SiteHttpSettings) {
    // Extra CAs as one secure context built once, not as a `ca` option: https.Agent puts every option
    // of its key list, `ca` included, into the pool key it builds for each request, and with the
    // system's roots that was a string of about 200 KB per tool call (8 % of the API's CPU in the
    // tool-call benchmark's profile); each new connection also parsed every root again.
    const secureContext = settings.siteCaCerts
      ? tls.createSecureContext({ ca: [...tls.rootCertificates, readFileSync(settings.siteCaCerts, 'utf8')] })
      : undefined;
    const common = { keepAlive: true, maxSockets: 64, secureContext };
    // Only the conformance CLI, on a site author's own machine, turns the block off (--allow-private).
    const allowPrivate = settings.allowPrivateAddresses === true;
    this.strictAgent = new RequestFilteringHttpsAgent({
      ...common,
      allowPrivateIPAddress: allowPrivate,
      allowMetaIPAddress: allowPrivate,
      lookup: guardedLookup,
    } as https.AgentOptions);
    // Private addresses allowed, link-local and metadata ones still not (checked after DNS).
    this.allowListedAgent = new https.Agent({ ...common, lookup: guardedLookup } as https.AgentOptions);
    this.allowList = new Set(settings.siteAllowPrivateHosts);
    this.allowPrivate = allowPrivate;
  }

  onModuleDestroy(): void {
    this.strictAgent.destroy();
    this.allowListedAgent.destroy();
  }

  /** The agent a connection to `url` goes through (the address filter, or allow-listed); the MCP fetch uses it. */
  agentFor(url: URL): https.Agent {
    return this.isAllowListed(url) ? this.allowListedAgent : this.strictAgent;
  }

  /** Whether `url`'s host (or host:port) is exempt from the private-address block. */
  isAllowListed(url: URL): boolean {
    if (this.allowPrivate) {
      return true;
    }
    const host = url.hostname.toLowerCase();
    const port = url.port || '443';
    return this.allowList.has(host) || this.allowList.has(`${host}:${port}`);
  }

  /**
   * Parses and checks a site URL: INVALID_URL unless it is https:// and, when the host is an IP
   * literal in any notation, a public address (or allow-listed). Host names are checked at connect.
   */
  assertSiteUrl(raw: string, field = 'url'): URL {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    // "not a url", "notes.example.com" and "localhost:3000" (which parses as scheme "localhost:") are no
    // web address at all: saying "must use https://" of them would answer another question.
    if (url === undefined || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw.trim())) {
      throw new AppError('INVALID_URL', `${field} is not a web address: give it as https://…`, [
        { field, message: 'is not a web address' },
      ]);
    }
    if (url.protocol !== 'https:') {
      throw new AppError('INVALID_URL', `${field} must use https://`, [{ field, message: 'must use https://' }]);
    }
    if (url.username !== '' || url.password !== '') {
      throw new AppError('INVALID_URL', `${field} must not carry credentials`, [
        { field, message: 'must not carry credentials' },
      ]);
    }
    // Never a metadata service or a link-local address, whatever is allowed (--allow-private, the allow-list).
    if (alwaysBlockedHost(url.hostname)) {
      throw new AppError('INVALID_URL', `${field} points to a non-public address (link-local or cloud metadata)`, [
        { field, message: 'points to a link-local or metadata address' },
      ]);
    }
    // WHATWG URL parsing already normalises octal, hex, decimal and short IPv4 forms to dotted quads
    // and IPv6 to its compressed form, so node:net recognises every IP literal host (ipaddr's own
    // isValid throws and catches for each host name, which cost more than the rest of this check).
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && !this.isAllowListed(url)) {
      let address = ipaddr.parse(literal);
      if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
        address = (address as ipaddr.IPv6).toIPv4Address();
      }
      if (address.range() !== 'unicast') {
        throw new AppError('INVALID_URL', `${field} points to a non-public address (${address.range()})`, [
          { field, message: 'points to a non-public address' },
        ]);
      }
    }
    return url;
  }

  /**
   * Sends the request, following redirects by hand. Within the first URL's origin a redirect is followed
   * as browsers do. To another origin, a POST (tool call, token request) is not followed at all: its
   * body and Authorization are meant for the site the user chose, and a site's open redirect must not
   * forward a token, a refresh token or a PKCE verifier (SiteNetworkError kind `redirect`). A GET is
   * followed without Authorization or cookies, for this hop and every later one.
   */
  async request(request: SiteRequest): Promise<SiteResponse> {
    let url = this.assertSiteUrl(request.url);
    const origin = url.origin;
    let method = request.method;
    let body = request.body;
    let headers = request.headers;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
      const response = await this.once({ ...request, method, body, headers }, url);
      const location = response.headers.location;
      if (request.redirect === 'manual') {
        return response;
      }
      if ([301, 302, 303, 307, 308].includes(response.status) && location !== undefined) {
        const next = this.assertSiteUrl(new URL(location, url).toString(), 'redirect');
        if (next.origin !== origin) {
          if (request.method !== 'GET') {
            throw new SiteNetworkError(
              `${url.host} redirected the request (${response.status}) to another origin, ${next.origin}; not followed`,
              'redirect',
            );
          }
          headers = withoutCredentials(headers);
        }
        url = next;
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return response;
    }
    throw new SiteNetworkError(`more than ${MAX_REDIRECTS} redirects`, 'network');
  }

  /**
   * One request; repeated once on a new connection when a kept-alive connection turned out to be
   * closed by the site as it was reused (the server dropped an idle socket just as the request went
   * out; nothing reached the site), which Node's documentation says to retry.
   */
  private async once(request: SiteRequest, url: URL): Promise<SiteResponse> {
    try {
      return await this.attempt(request, url);
    } catch (err) {
      if (!staleKeepAlive(err)) {
        throw classifyNetworkError(err, url, MAX_RESPONSE_BYTES);
      }
    }
    try {
      return await this.attempt(request, url);
    } catch (err) {
      throw classifyNetworkError(err, url, MAX_RESPONSE_BYTES);
    }
  }

  private async attempt(request: SiteRequest, url: URL): Promise<SiteResponse> {
    const response = await axios.request<ArrayBuffer>({
      url: url.toString(),
      method: request.method,
      headers: { 'user-agent': this.userAgent, ...request.headers },
      data: request.body,
      httpsAgent: this.agentFor(url),
      proxy: false,
      maxRedirects: 0,
      responseType: 'arraybuffer',
      validateStatus: () => true,
      timeout: request.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxContentLength: MAX_RESPONSE_BYTES,
      signal: request.signal,
      transitional: { clarifyTimeoutError: true },
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined && value !== null) {
        headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
      }
    }
    return { status: response.status, headers, body: Buffer.from(response.data), url: url.toString() };
  }
}
