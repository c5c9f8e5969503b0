import { AppError } from '../common/app-error.js';
import type { SiteNetworkError } from '../sites/site-http.js';

/** How a tool call failed; decides whether retrying can help (activities) and what the API answers. */
export type ToolFailureKind =
  | 'no_credential'
  | 'reauth_required'
  | 'unreadable_credential'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'bad_request'
  | 'rate_limited'
  /** The site asked to wait longer than the service will park a call (MAX_DURABLE_WAIT_SECONDS). */
  | 'wait_too_long'
  /** The site redirected a POST to another origin: not followed (it would carry the token and body). */
  | 'redirected'
  | 'server_error'
  | 'timeout'
  | 'network'
  | 'invalid_response';

const RETRYABLE: ReadonlySet<ToolFailureKind> = new Set(['rate_limited', 'server_error', 'timeout', 'network']);

/** A tool call that did not succeed, with the specification's code and the site's message. */
export class ToolCallFailure extends AppError {
  readonly retryable: boolean;

  constructor(
    readonly kind: ToolFailureKind,
    message: string,
    retryAfterSeconds?: number,
  ) {
    super(
      kind === 'rate_limited' ? 'OUTGOING_RATE_LIMITED' : 'TOOL_EXECUTION_ERROR',
      message,
      undefined,
      retryAfterSeconds,
    );
    this.name = 'ToolCallFailure';
    this.retryable = RETRYABLE.has(kind);
  }
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
 * What a tool call's network failure says to users, the model and run timelines: the site's host
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
