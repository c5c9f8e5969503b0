import { AppError } from '../common/app-error.js';
import type { SiteRequest, SiteResponse } from '../sites/site-http.js';
import { SiteNetworkError } from '../sites/site-http.js';

/** What the checks need of the site HTTP client (SSRF guard, HTTPS only, extra CA): SiteHttpClient. */
export interface CheckerHttp {
  request(request: SiteRequest): Promise<SiteResponse>;
  assertSiteUrl(raw: string, field?: string): URL;
}

export const CHECK_TIMEOUT_MS = 10_000;

/**
 * Thrown by the HTTP client a check is given when it may send nothing more (through the API: the
 * outgoing limits, or the requests one check may make). The rules not checked yet are skipped with
 * its message; the CLI's client never throws it.
 */
export class CheckStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckStopped';
  }
}

/** A site's answer read as JSON: the parsed body when the content type says JSON and the body parses. */
export interface JsonAnswer {
  json: unknown;
  isJson: boolean;
  contentType: string;
}

export function readJson(response: SiteResponse): JsonAnswer {
  const contentType = response.headers['content-type'] ?? '';
  const declared = /^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim());
  try {
    return { json: JSON.parse(response.body.toString('utf8')) as unknown, isJson: declared, contentType };
  } catch {
    return { json: undefined, isJson: false, contentType };
  }
}

/** The `error` string of a JSON error body, if it has one. */
export function errorText(answer: JsonAnswer): string | undefined {
  const error = (answer.json as { error?: unknown } | null | undefined)?.error;
  return typeof error === 'string' && error !== '' ? error : undefined;
}

/** A short excerpt of a body, for messages. */
export function excerpt(response: SiteResponse, max = 120): string {
  const text = response.body.toString('utf8').replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** TLS verification codes (OpenSSL's, as Node reports them) and what they mean to a site author. */
const TLS_PROBLEMS: Array<[RegExp, string, string]> = [
  [
    /CERT_HAS_EXPIRED|CERT_NOT_YET_VALID/,
    'the TLS certificate is expired or not yet valid',
    'Renew the certificate (automate it, e.g. with ACME).',
  ],
  [
    /ALTNAME|Hostname\/IP does not match/i,
    "the TLS certificate does not name the site's host",
    'Issue the certificate for the exact host name in the site URL (subjectAltName).',
  ],
  [
    /SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY_LEAF|CERT_UNTRUSTED|CERT_SIGNATURE_FAILURE|certificate/i,
    'the TLS certificate chain does not lead to a trusted CA',
    'Use a certificate from a public CA and serve the full chain (leaf and intermediates).',
  ],
];

/** The code and message of every error in a cause chain (axios wraps the socket's TLS error). */
function causeTexts(err: unknown): string {
  const texts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown };
    texts.push(`${String(e.code ?? '')} ${String(e.message ?? '')}`);
    current = e.cause;
  }
  return texts.join(' | ');
}

export interface ConnectProblem {
  message: string;
  hint: string;
}

/** Why a request to the site could not be made, in a site author's terms (TLS, private address, network). */
export function connectProblem(err: unknown): ConnectProblem | undefined {
  if (err instanceof AppError && err.code === 'INVALID_URL') {
    return {
      message: `${err.message}: the service refuses it (SSRF guard)`,
      hint: 'Serve the site on a public address. To check a local copy, run agentsite-check with --allow-private.',
    };
  }
  if (!(err instanceof SiteNetworkError)) {
    return undefined;
  }
  const texts = causeTexts(err);
  for (const [pattern, message, hint] of TLS_PROBLEMS) {
    if (pattern.test(texts)) {
      return { message: `${message} (${texts.match(/[A-Z_]{6,}/)?.[0] ?? 'TLS'})`, hint };
    }
  }
  return {
    message: err.message,
    hint: 'Make the site reachable over HTTPS (port open, TLS served, answering within 10 s).',
  };
}
