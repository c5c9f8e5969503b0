import { AppError } from '../common/app-error.js';

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
