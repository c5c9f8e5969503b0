import { Logger } from '@nestjs/common';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { AppError } from '../common/app-error.js';
import type { ErrorCode } from '../common/error-codes.js';
import { INTERNAL_ERROR_CODE } from '../common/error-filter.js';
import { ToolCallFailure } from '../sites/tool-failure.js';

/** JSON-RPC code of the service's refusals (JSON-RPC 2.0 leaves -32000 to -32099 to servers). */
export const SERVICE_REFUSAL = -32000;

/** Codes that say the request named something wrong: JSON-RPC's Invalid params, as MCP asks for unknown tools. */
const INVALID_PARAMS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'VALIDATION_ERROR',
  'WEBHOOK_PAYLOAD_INVALID',
  'NOT_FOUND',
  'RUN_NOT_FOUND',
  'AGENT_NOT_FOUND',
  'RUN_NOT_CANCELLABLE',
]);

/** What a JSON-RPC error of /mcp carries in `data`: the service's code and HTTP status (as /api answers them). */
export interface McpErrorData {
  code: ErrorCode | typeof INTERNAL_ERROR_CODE;
  statusCode: number;
  details?: AppError['details'];
  retryAfterSeconds?: number;
}

export function errorData(error: AppError): McpErrorData {
  return {
    code: error.code,
    statusCode: error.statusCode,
    ...(error.details !== undefined ? { details: error.details } : {}),
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
  };
}

/** The service's error as a JSON-RPC error: -32602 for a wrong name or input, -32000 for a refusal. */
export function protocolError(error: AppError): ProtocolError {
  const code = INVALID_PARAMS.has(error.code) ? ProtocolErrorCode.InvalidParams : SERVICE_REFUSAL;
  return new ProtocolError(code, error.message, errorData(error));
}

const logger = new Logger('McpServer');

/**
 * Runs a handler and answers its failure as MCP expects: the service's errors as JSON-RPC errors
 * with `data: {code, statusCode}`, anything unexpected as -32603 without its message (logged).
 */
export async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ProtocolError) {
      throw err;
    }
    if (err instanceof AppError) {
      throw protocolError(err);
    }
    logger.error(`unexpected failure: ${err instanceof Error ? err.name : typeof err}`, (err as Error)?.stack);
    throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error', {
      code: INTERNAL_ERROR_CODE,
      statusCode: 500,
    } satisfies McpErrorData);
  }
}

/**
 * Whether a failed tool call is the site's own answer (an `isError` result for the model to read) rather
 * than the service refusing to send it (no credential, a connection to renew, the outgoing limits).
 */
export function isSiteFailure(err: unknown): err is ToolCallFailure {
  return (
    err instanceof ToolCallFailure &&
    !['no_credential', 'reauth_required', 'unreadable_credential', 'rate_limited'].includes(err.kind)
  );
}
