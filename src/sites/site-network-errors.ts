import { type AxiosError, isAxiosError } from 'axios';
import { AppError } from '../common/app-error.js';

// How a failed request to a site is told: classified for the code (SiteNetworkError's kind, or a
// refused address) and worded for users without the socket error's addresses and ports.

/** The request could not be made or finished: connection refused, TLS failure, timeout, abort. */
export class SiteNetworkError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'aborted' | 'network' | 'too_large' | 'redirect',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SiteNetworkError';
  }
}

const BLOCKED_BY_FILTER = /is not allowed\. Because/;

/** A reused keep-alive socket that the server had closed: reset or hung up before any answer. */
export function staleKeepAlive(err: unknown): boolean {
  if (!isAxiosError(err) || err.response !== undefined) {
    return false;
  }
  const reused = (err.request as { reusedSocket?: boolean } | undefined)?.reusedSocket === true;
  const code = err.code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
  return reused && (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(err.message));
}

/** The error a failed request is answered with (`maxBytes`: the client's answer size limit, for its message). */
export function classifyNetworkError(err: unknown, url: URL, maxBytes: number): Error {
  const message = err instanceof Error ? err.message : String(err);
  const cause = isAxiosError(err) ? ((err as AxiosError).cause ?? err) : err;
  const causeMessage = cause instanceof Error ? cause.message : '';
  if (BLOCKED_BY_FILTER.test(message) || BLOCKED_BY_FILTER.test(causeMessage)) {
    return new AppError('INVALID_URL', `${url.host} resolves to a non-public address`, [
      { field: 'url', message: 'resolves to a non-public address' },
    ]);
  }
  if (isAxiosError(err)) {
    if (err.code === 'ETIMEDOUT' || err.code === 'ECONNABORTED') {
      return new SiteNetworkError(`${url.host} did not answer in time`, 'timeout', { cause: err });
    }
    if (err.code === 'ERR_CANCELED') {
      return new SiteNetworkError('the request was aborted', 'aborted', { cause: err });
    }
    if (err.code === 'ERR_BAD_RESPONSE' && /maxContentLength/.test(message)) {
      return new SiteNetworkError(`${url.host} answered more than ${maxBytes} bytes`, 'too_large', {
        cause: err,
      });
    }
  }
  return new SiteNetworkError(`could not reach ${url.host}: ${causeMessage || message}`, 'network', { cause: err });
}

/** System error codes of a failed connection, as a user can read them (without addresses or ports). */
const NETWORK_GIST: Array<[RegExp, string]> = [
  [/ENOTFOUND|EAI_AGAIN/, "the site's address does not resolve"],
  [/ECONNREFUSED/, 'the site refused the connection'],
  [/ECONNRESET|EPIPE|socket hang up/i, 'the site closed the connection'],
  [/EHOSTUNREACH|ENETUNREACH/, 'the site cannot be reached'],
  [/CERT|certificate|self[- ]signed|SSL|TLS/i, "the site's TLS certificate is not trusted"],
];

/**
 * What a failed request to a site says to users, the model and run timelines: the site's host
 * (from its manifest) is fine, the socket error's own text (resolved addresses, ports) is not.
 */
export function publicNetworkMessage(err: SiteNetworkError): string {
  switch (err.kind) {
    case 'timeout':
    case 'too_large':
    case 'aborted':
    case 'redirect':
      return err.message; // built by us from the host, our limits and our redirect policy only
    case 'network': {
      if (/redirect/i.test(err.message)) {
        return err.message; // our own words about the site's redirects (no socket error text)
      }
      const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
      const text = `${String(cause?.code ?? '')} ${String(cause?.message ?? '')} ${err.message}`;
      return NETWORK_GIST.find(([pattern]) => pattern.test(text))?.[1] ?? 'the site could not be reached';
    }
  }
}
