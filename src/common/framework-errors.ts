import { Logger } from '@nestjs/common';
import type { FastifyError } from 'fastify';
import { AppError } from './app-error.js';
import { writeAppError, writeUnexpectedError } from './error-filter.js';
import type { ApiReply, ApiRequest, NodeMiddleware } from './http.js';

/**
 * Fastify's `frameworkErrors`: a request its router refuses before any route or hook (a path whose
 * percent-encoding is broken) gets what any other request gets first (`before`: its id, access log
 * line, metrics, security headers), then the API's error body: VALIDATION_ERROR naming the
 * path, as Express's router answered it.
 */
export function answerFrameworkError(
  before: readonly NodeMiddleware[],
): (error: FastifyError, req: ApiRequest, reply: ApiReply) => void {
  const logger = new Logger('Errors');
  return (error, req, reply) => {
    const answer = (failure?: unknown): void => {
      if (reply.raw.writableEnded) {
        return;
      }
      if (failure === undefined && (error.statusCode ?? 500) < 500) {
        writeAppError(reply, AppError.validation([{ field: 'path', message: 'is not a valid URL path' }]));
      } else {
        writeUnexpectedError(req, reply, failure ?? error, logger);
      }
    };
    const run = (i: number): void => {
      const middleware = before[i];
      if (middleware === undefined) {
        answer();
        return;
      }
      middleware(req.raw, reply.raw, (err?: unknown) => (err === undefined ? run(i + 1) : answer(err)));
    };
    run(0);
  };
}
