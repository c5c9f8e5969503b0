import { describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { formatLogLine, messageText, sanitize, serializeError, stackForLog } from './log-format.js';

function parse(line: string): Record<string, unknown> {
  expect(line).not.toContain('\n');
  return JSON.parse(line) as Record<string, unknown>;
}

describe('formatLogLine: the one shape of every log line', () => {
  it('writes the frame, then the join fields, then the rest, on one line', () => {
    const line = formatLogLine({
      level: 'info',
      message: 'GET /api/agents/:id 200',
      service: 'api',
      context: 'http',
      time: new Date('2026-11-23T12:00:00.000Z'),
      fields: { status: 200, runId: 'r1', requestId: 'req-1', userId: 'u1', agentId: 'a1', durationMs: 1.5 },
    });
    const parsed = parse(line);
    expect(Object.keys(parsed)).toEqual([
      'time',
      'level',
      'service',
      'pid',
      'context',
      'message',
      'requestId',
      'userId',
      'agentId',
      'runId',
      'status',
      'durationMs',
    ]);
    expect(parsed).toMatchObject({
      time: '2026-11-23T12:00:00.000Z',
      level: 'info',
      service: 'api',
      pid: process.pid,
      context: 'http',
    });
  });

  it('leaves out join fields that are not known, and a missing context', () => {
    const parsed = parse(formatLogLine({ level: 'warn', message: 'x', service: 'worker', fields: { userId: '' } }));
    expect(parsed).not.toHaveProperty('userId');
    expect(parsed).not.toHaveProperty('requestId');
    expect(parsed).not.toHaveProperty('context');
    expect(typeof parsed.time).toBe('string');
  });

  it('lets no field overwrite the frame', () => {
    const parsed = parse(
      formatLogLine({
        level: 'error',
        message: 'real',
        service: 'api',
        fields: { level: 'info', message: 'forged', service: 'worker', time: 'then', pid: 1 },
      }),
    );
    expect(parsed).toMatchObject({ level: 'error', message: 'real', service: 'api', pid: process.pid });
    expect(parsed.time).not.toBe('then');
  });

  it('keeps a message with quotes and newlines on one line (no forged lines)', () => {
    const line = formatLogLine({ level: 'info', message: 'a "b"\n{"level":"fatal"}', service: 'api' });
    expect(parse(line).message).toBe('a "b"\n{"level":"fatal"}');
  });
});

describe('sanitize: ids and sizes, never secrets or run data', () => {
  it('redacts credentials by field name, at any depth, but keeps token counts', () => {
    expect(sanitize('authorization', 'Bearer abc')).toBe('[redacted]');
    expect(sanitize('accessToken', 'abc')).toBe('[redacted]');
    expect(sanitize('taskToken', 'abc')).toBe('[redacted]');
    expect(sanitize('webhookSecret', 'abc')).toBe('[redacted]');
    expect(sanitize('usage', { inputTokens: 12, outputTokens: 3, password: 'pw' })).toEqual({
      inputTokens: 12,
      outputTokens: 3,
      password: '[redacted]',
    });
  });

  it('replaces payloads, prompts, tool inputs and outputs by their size', () => {
    expect(sanitize('payload', { ticket: 'Printer on fire' })).toEqual({ omittedBytes: 28 });
    expect(sanitize('input', 'héllo')).toEqual({ omittedBytes: 6 });
    const messages = [{ role: 'user', content: 'hi' }];
    expect(sanitize('messages', messages)).toEqual({ omittedBytes: JSON.stringify(messages).length });
    expect(sanitize('system', 'You are …')).toEqual({ omittedBytes: 8 + 3 }); // … is 3 bytes in UTF-8
    expect(sanitize('result', Buffer.from('abc'))).toEqual({ omittedBytes: 3 });
    const line = formatLogLine({
      level: 'info',
      message: 'm',
      service: 'worker',
      fields: { prompt: 'secret plan', output: 'the answer', siteId: 's1' },
    });
    expect(line).not.toContain('secret plan');
    expect(line).not.toContain('the answer');
    expect(parse(line)).toMatchObject({ prompt: { omittedBytes: 11 }, output: { omittedBytes: 10 }, siteId: 's1' });
  });

  it('writes bigints, dates and deep structures safely', () => {
    expect(sanitize('n', 10n)).toBe('10');
    expect(sanitize('at', new Date('2026-01-01T00:00:00Z'))).toBe('2026-01-01T00:00:00.000Z');
    expect(sanitize('f', () => 1)).toBeUndefined();
    expect(sanitize('deep', { a: { b: { c: { d: 'x' } } } })).toEqual({ a: { b: { c: { omittedBytes: 9 } } } });
  });
});

describe('serializeError', () => {
  it("keeps the class and message of our own code's errors", () => {
    const err = Object.assign(new TypeError('x is undefined'), { code: 'E_X' });
    expect(serializeError(err)).toEqual({ name: 'TypeError', code: 'E_X', message: 'x is undefined' });
  });

  it("keeps only the type of Temporal's failures: their message is a site's or the model's words", () => {
    const failure = ApplicationFailure.nonRetryable(
      'Notebook says: the note "Salaries" is locked',
      'TOOL_EXECUTION_ERROR',
    );
    const out = serializeError(failure);
    expect(out).toEqual({ name: 'ApplicationFailure', type: 'TOOL_EXECUTION_ERROR' });
    expect(JSON.stringify(sanitize('error', failure))).not.toContain('Salaries');
  });

  it("keeps a PostgreSQL error's SQLSTATE, never its message, which quotes values", () => {
    const quoted = 'invalid input syntax for type uuid: "private words"';
    const typeorm = Object.assign(new Error(quoted), { name: 'QueryFailedError', code: '22P02' });
    const pg = Object.assign(new Error(quoted), { name: 'error', code: '22P02' });
    for (const err of [typeorm, pg]) {
      expect(serializeError(err)).toEqual({ name: err.name, code: '22P02' });
      expect(messageText(err)).not.toContain('private words');
      const stack = stackForLog(err.stack!);
      expect(stack).not.toContain('private words');
      expect(stack.split('\n')[0]).toBe(`${err.name}: [PostgreSQL's message omitted: it may quote values]`);
      // The frames stay: they tell where it failed.
      expect(stack.split('\n').length).toBe(err.stack!.split('\n').length);
    }
    // Any other error's stack is left as it is.
    const own = new TypeError('x is undefined');
    expect(stackForLog(own.stack!)).toBe(own.stack);
  });

  it('follows causes, a few levels deep', () => {
    const err = new Error('outer', { cause: new RangeError('inner') });
    expect(serializeError(err)).toEqual({
      name: 'Error',
      message: 'outer',
      cause: { name: 'RangeError', message: 'inner' },
    });
  });
});

describe('messageText', () => {
  it('writes strings as they are, errors by class and message, objects as sanitized JSON', () => {
    expect(messageText('plain')).toBe('plain');
    expect(messageText(new Error('boom'))).toBe('Error: boom');
    expect(messageText({ runId: 'r1', token: 't' })).toBe('{"runId":"r1","token":"[redacted]"}');
  });
});
