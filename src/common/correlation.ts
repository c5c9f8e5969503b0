import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type AnyRequest, type Next, type NodeRequest, type NodeResponse, rawRequest } from './http.js';
import { runWithLogFields } from './log-context.js';
import type { LogFields } from './log-format.js';

/** The request id, under its older name: kept on every answer (clients and the contract check read it). */
export const CORRELATION_HEADER = 'x-correlation-id';
/** The request id, under the name proxies and log pipelines know. Same value as CORRELATION_HEADER. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What a caller's request id may look like: anything else is replaced by a fresh one. */
export const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The caller's request id when sane (X-Request-Id first, then X-Correlation-Id), else a new one. */
export function requestIdFrom(headers: IncomingHttpHeaders): string {
  for (const name of [REQUEST_ID_HEADER, CORRELATION_HEADER]) {
    const value = headers[name];
    if (typeof value === 'string' && SAFE_ID.test(value)) {
      return value;
    }
  }
  return randomUUID();
}

/**
 * Gives every request its id (the caller's, when it is sane), echoes it in the answer under both
 * names, and opens the request's log fields: every line written for this request carries them.
 */
export function correlationMiddleware(req: NodeRequest, res: NodeResponse, next: Next): void {
  const id = requestIdFrom(req.headers);
  const request = req as RequestWithCorrelation;
  request.correlationId = id;
  request.logFields = { requestId: id };
  res.setHeader(CORRELATION_HEADER, id);
  res.setHeader(REQUEST_ID_HEADER, id);
  runWithLogFields(request.logFields, next);
}

/**
 * Re-enters the request's log fields (a Fastify hook after the body is read: the body parsers resume
 * the request from the socket's events, which lose the async context opened before them).
 */
export function resumeLogFields(req: AnyRequest, _reply: unknown, done: () => void): void {
  runWithLogFields(requestLogFields(req), done);
}

export type RequestWithCorrelation = NodeRequest & {
  correlationId?: string;
  logFields?: LogFields;
};

export function correlationIdOf(req: AnyRequest): string {
  return (rawRequest(req) as RequestWithCorrelation).correlationId ?? 'none';
}

/** The request's log fields (the object the request's lines and its access log line read). */
export function requestLogFields(req: AnyRequest): LogFields {
  const request = rawRequest(req) as RequestWithCorrelation;
  request.logFields ??= request.correlationId !== undefined ? { requestId: request.correlationId } : {};
  return request.logFields;
}
