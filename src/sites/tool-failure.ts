import { AppError } from '../common/app-error.js';
import type { SiteNetworkError } from './site-network-errors.js';

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

/**
 * A call to a site with no stored credential (never connected, or its token or connection removed):
 * refused by the service before anything is sent, in words the console, chat and runs show as they are.
 */
export function notConnected(siteName: string): ToolCallFailure {
  return new ToolCallFailure('no_credential', `${siteName} is not connected: store a token or connect it`);
}

/** A connection the site refused to renew (revoked there): nothing is sent until it is approved again. */
export function needsReconnecting(siteName: string): ToolCallFailure {
  return new ToolCallFailure(
    'reauth_required',
    `${siteName} needs to be connected again: the site refused to renew the connection`,
  );
}

/** The kind of a tool call that failed on the network (the same for site and MCP calls). */
export function networkFailureKind(err: SiteNetworkError): ToolFailureKind {
  switch (err.kind) {
    case 'timeout':
      return 'timeout';
    case 'too_large':
      return 'invalid_response';
    case 'redirect':
      return 'redirected';
    default:
      return 'network';
  }
}
