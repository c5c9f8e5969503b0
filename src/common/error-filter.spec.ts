import { type ArgumentsHost, Logger, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError } from './app-error.js';
import { AppErrorFilter } from './error-filter.js';

interface Captured {
  status?: number;
  body?: Record<string, unknown>;
  headers: Record<string, string>;
}

function run(exception: unknown): Captured {
  const captured: Captured = { headers: {} };
  // Fastify's reply and request, as the filter gets them from a route.
  const raw = {
    headersSent: false,
    setHeader: (name: string, value: string) => {
      captured.headers[name.toLowerCase()] = value;
    },
    end: () => undefined,
  };
  const res = {
    raw,
    sent: false,
    code(code: number) {
      captured.status = code;
      return this;
    },
    type() {
      return this;
    },
    send(body: Record<string, unknown>) {
      captured.body = body;
      return this;
    },
  };
  const req = {
    method: 'GET',
    url: '/api/x?y=1',
    originalUrl: '/api/x?y=1',
    server: {},
    raw: { url: '/api/x?y=1', originalUrl: '/api/x?y=1', correlationId: 'corr-1234567' },
  };
  const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
  new AppErrorFilter().catch(exception, host);
  return captured;
}

describe('AppErrorFilter', () => {
  const quiet = jestSilenceLogger();
  beforeAll(quiet.on);
  afterAll(quiet.off);

  it('writes an AppError as the error body, with Retry-After on a 429', () => {
    const out = run(new AppError('RATE_LIMITED', 'slow down', undefined, 12.2));
    expect(out.status).toBe(429);
    expect(out.body).toEqual({ error: 'slow down', code: 'RATE_LIMITED', statusCode: 429 });
    expect(out.headers['retry-after']).toBe('13');
  });

  it('maps an unknown route to NOT_FOUND and a too-large body to VALIDATION_ERROR', () => {
    expect(run(new NotFoundException()).body).toMatchObject({ code: 'NOT_FOUND', statusCode: 404 });
    expect(run(new PayloadTooLargeException()).body).toMatchObject({ code: 'VALIDATION_ERROR', statusCode: 400 });
  });

  it('answers anything unexpected with a generic 500 that names the correlation id and hides the stack', () => {
    const out = run(new TypeError('secret internals at /src/thing.ts:12'));
    expect(out.status).toBe(500);
    expect(out.body?.statusCode).toBe(500);
    expect(String(out.body?.error)).toContain('corr-1234567');
    expect(JSON.stringify(out.body)).not.toContain('secret internals');
    expect(JSON.stringify(out.body)).not.toContain('thing.ts');
  });
});

/** The filter logs unexpected errors; keep the test output readable. */
function jestSilenceLogger(): { on: () => void; off: () => void } {
  return {
    on: () => Logger.overrideLogger(false),
    off: () => Logger.overrideLogger(['error', 'warn', 'log']),
  };
}
