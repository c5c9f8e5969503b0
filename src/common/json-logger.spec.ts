import { describe, expect, it } from '@jest/globals';
import { addLogFields, currentRequestId, runWithLogFields } from './log-context.js';
import { JsonLogger } from './json-logger.js';

function capture(level: 'error' | 'warn' | 'log' | 'debug' = 'log') {
  const lines: Array<{ line: Record<string, unknown>; stream: string }> = [];
  const logger = new JsonLogger('api', 'agentsite', level, (line, stream) => {
    lines.push({ line: JSON.parse(line) as Record<string, unknown>, stream });
  });
  return { logger, lines };
}

describe("JsonLogger: Nest's logger in the one line shape", () => {
  it("writes Nest's calls (message, context, stack, params) as JSON lines with Nest's levels mapped", () => {
    const { logger, lines } = capture();
    logger.log('started', 'main');
    logger.warn('slow', { durationMs: 12 }, 'Runs');
    logger.error('failed', 'Error: x\n    at f (file.js:1:2)', 'Errors');
    expect(lines.map((l) => l.line)).toEqual([
      expect.objectContaining({ level: 'info', service: 'api', context: 'main', message: 'started' }),
      expect.objectContaining({ level: 'warn', context: 'Runs', message: 'slow', durationMs: 12 }),
      expect.objectContaining({ level: 'error', context: 'Errors', message: 'failed', stack: expect.any(String) }),
    ]);
    expect(lines[2]!.stream).toBe('stderr');
  });

  it('adds the current request’s ids, including those learnt later in the request', async () => {
    const { logger, lines } = capture();
    await runWithLogFields({ requestId: 'req-12345678' }, async () => {
      logger.log('before auth', 'x');
      await Promise.resolve();
      addLogFields({ userId: 'user-1', runId: undefined });
      expect(currentRequestId()).toBe('req-12345678');
      logger.log('after auth', 'x');
    });
    logger.log('outside', 'x');
    expect(lines[0]!.line).toMatchObject({ requestId: 'req-12345678' });
    expect(lines[0]!.line).not.toHaveProperty('userId');
    expect(lines[1]!.line).toMatchObject({ requestId: 'req-12345678', userId: 'user-1' });
    expect(lines[1]!.line).not.toHaveProperty('runId');
    expect(lines[2]!.line).not.toHaveProperty('requestId');
  });

  it('follows LOG_LEVEL', () => {
    const { logger, lines } = capture('warn');
    logger.log('dropped');
    logger.debug('dropped');
    logger.warn('kept');
    expect(lines.map((l) => l.line.message)).toEqual(['kept']);
  });
});
