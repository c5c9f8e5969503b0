import { describe, expect, it } from '@jest/globals';
import { AppError } from './app-error.js';
import { ERROR_CODES, ERROR_STATUS } from './error-codes.js';

/** The Errors table of the specification (service-spec.md), code → HTTP status. */
const SPEC_TABLE: Record<string, number> = {
  UNAUTHORIZED: 401,
  TOKEN_EXPIRED: 401,
  TOKEN_REVOKED: 401,
  INVALID_TOKEN: 401,
  ADMIN_REQUIRED: 403,
  TERMS_NOT_ACCEPTED: 403,
  RATE_LIMITED: 429,
  OUTGOING_RATE_LIMITED: 429,
  NO_CREDITS: 402,
  NO_PAYMENT_METHOD: 402,
  PAYMENT_FAILED: 402,
  SUBSCRIPTION_PAST_DUE: 402,
  TIER_REQUIRED: 403,
  FEATURE_LIMIT_REACHED: 403,
  WORKSPACE_REQUIRED: 403,
  INVALID_SESSION: 400,
  SESSION_NOT_FOUND: 404,
  SESSION_EXPIRED: 410,
  CHAT_TIMEOUT: 504,
  STREAM_ABORTED: 499,
  MODEL_ERROR: 502,
  TOOL_EXECUTION_ERROR: 502,
  TOKEN_EXISTS: 409,
  VAULT_LIMIT_REACHED: 403,
  MANIFEST_NOT_FOUND: 404,
  MANIFEST_INVALID: 422,
  AGENT_NOT_FOUND: 404,
  AGENT_LIMIT_REACHED: 403,
  RUN_NOT_FOUND: 404,
  RUN_NOT_CANCELLABLE: 400,
  AGENT_ALREADY_RUNNING: 409,
  WEBHOOK_SECRET_INVALID: 401,
  WEBHOOK_PAYLOAD_INVALID: 422,
  VALIDATION_ERROR: 400,
  INVALID_URL: 400,
  NOT_FOUND: 404,
  WORKSPACE_NOT_FOUND: 404,
  PERMISSION_DENIED: 403,
  MEMBER_NOT_FOUND: 404,
  ROLE_CHANGE_FORBIDDEN: 403,
};

describe('error codes', () => {
  it('are exactly the 40 codes of the specification, each with its HTTP status', () => {
    expect(Object.keys(SPEC_TABLE)).toHaveLength(40);
    expect(ERROR_STATUS).toEqual(SPEC_TABLE);
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(SPEC_TABLE).sort());
  });

  it('AppError carries the status of its code and writes the error body', () => {
    const error = new AppError('SESSION_EXPIRED', 'gone');
    expect(error.statusCode).toBe(410);
    expect(error.toBody()).toEqual({ error: 'gone', code: 'SESSION_EXPIRED', statusCode: 410 });
    const validation = AppError.validation([{ field: 'email', message: 'bad' }]);
    expect(validation.toBody()).toEqual({
      error: 'Request validation failed',
      code: 'VALIDATION_ERROR',
      statusCode: 400,
      details: [{ field: 'email', message: 'bad' }],
    });
  });
});
