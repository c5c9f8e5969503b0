import { describe, expect, it } from '@jest/globals';
import { ProtocolError } from '@modelcontextprotocol/server';
import { AppError } from '../common/app-error.js';
import { ToolCallFailure } from '../sites/tool-failure.js';
import { answering, isSiteFailure, SERVICE_REFUSAL } from './mcp-errors.js';

async function thrownBy(work: () => Promise<unknown>): Promise<ProtocolError> {
  try {
    await answering(work);
  } catch (err) {
    return err as ProtocolError;
  }
  throw new Error('nothing was thrown');
}

describe('the MCP endpoint’s errors', () => {
  it('answers a wrong name or input as -32602 and a refusal as -32000, with the code and status in data', async () => {
    const invalid = await thrownBy(async () => {
      throw AppError.validation([{ field: 'title', message: 'is required' }]);
    });
    expect(invalid).toBeInstanceOf(ProtocolError);
    expect(invalid).toMatchObject({
      code: -32602,
      data: { code: 'VALIDATION_ERROR', statusCode: 400, details: [{ field: 'title', message: 'is required' }] },
    });
    const refused = await thrownBy(async () => {
      throw new AppError('OUTGOING_RATE_LIMITED', 'slow down', undefined, 30);
    });
    expect(refused).toMatchObject({
      code: SERVICE_REFUSAL,
      message: 'slow down',
      data: { code: 'OUTGOING_RATE_LIMITED', statusCode: 429, retryAfterSeconds: 30 },
    });
  });

  it('answers an unexpected failure as -32603 without its message', async () => {
    const internal = await thrownBy(async () => {
      throw new Error('connection string postgres://secret@db');
    });
    expect(internal).toMatchObject({ code: -32603, message: 'Internal error', data: { code: 'INTERNAL_ERROR' } });
  });

  it('tells the site’s own failures (isError results) from the service’s refusals (errors)', () => {
    expect(isSiteFailure(new ToolCallFailure('server_error', 'the site failed (500)'))).toBe(true);
    expect(isSiteFailure(new ToolCallFailure('not_found', 'the site answered 404'))).toBe(true);
    expect(isSiteFailure(new ToolCallFailure('no_credential', 'not connected'))).toBe(false);
    expect(isSiteFailure(new ToolCallFailure('reauth_required', 'connect again'))).toBe(false);
    expect(isSiteFailure(new ToolCallFailure('rate_limited', 'the site is limiting'))).toBe(false);
    expect(isSiteFailure(new AppError('PERMISSION_DENIED', 'no'))).toBe(false);
  });
});
