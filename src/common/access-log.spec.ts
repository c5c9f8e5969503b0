import { EventEmitter } from 'node:events';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { accessLogMiddleware, setRouteTemplate } from './access-log.js';
import type { NodeRequest, NodeResponse } from './http.js';
import { JsonLogger } from './json-logger.js';

/** The process's logger at `level`, collecting its lines (as main.ts installs it through NestFactory). */
function logAt(level: 'warn' | 'log'): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  Logger.overrideLogger(new JsonLogger('api', 'agentsite', level, (line) => lines.push(JSON.parse(line))));
  return lines;
}

/**
 * GET /api/me through the middleware (its answer an emitter, as Node's is): the answer, and how many
 * times the middleware handed the request on.
 */
function passThrough(): { res: NodeResponse & EventEmitter; nexts: number } {
  const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true });
  const req = { method: 'GET', logFields: { requestId: 'req-12345678' } } as unknown as NodeRequest;
  setRouteTemplate(req, '/api/me');
  let nexts = 0;
  accessLogMiddleware(req, res as unknown as NodeResponse, () => (nexts += 1));
  return { res: res as unknown as NodeResponse & EventEmitter, nexts };
}

describe('the access log line', () => {
  afterAll(() => Logger.overrideLogger(false));

  it('at LOG_LEVEL log: one line when the answer is sent', () => {
    const lines = logAt('log');
    const { res, nexts } = passThrough();
    expect(nexts).toBe(1);
    res.emit('finish');
    res.emit('close');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        context: 'http',
        route: '/api/me',
        status: 200,
        requestId: 'req-12345678',
      }),
    ]);
  });

  it('at LOG_LEVEL warn: the request goes on with nothing timed and no listener left on the answer', () => {
    const lines = logAt('warn');
    const { res, nexts } = passThrough();
    expect(nexts).toBe(1);
    expect(res.listenerCount('finish') + res.listenerCount('close')).toBe(0);
    res.emit('finish');
    expect(lines).toEqual([]);
  });
});
