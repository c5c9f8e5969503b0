import { performance } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { requestLogFields } from './correlation.js';

/** The path of the route Nest's not-found handler is mounted on (platform-express setNotFoundHandler). */
const NEST_NOT_FOUND_ROUTE = '*path';

/** The route a request matched, as declared (`/api/agents/:id`), never the raw path; null when none did. */
export function routeTemplate(req: Request): string | null {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  // Nest answers unknown paths under its prefix with a catch-all route of its own (`*path`): no route.
  if (route === undefined || typeof route.path !== 'string' || route.path === NEST_NOT_FOUND_ROUTE) {
    return null;
  }
  return `${req.baseUrl}${route.path}`;
}

const logger = new Logger('http');

/**
 * One line per request, written when the answer is sent (or the client went away): method, route
 * template, status, duration, and the request's ids. Never the path's values, the query string,
 * headers or bodies: those carry ids of other users' objects, tokens and run data.
 */
export function accessLogMiddleware(req: Request, res: Response, next: NextFunction): void {
  // LOG_LEVEL above info writes no access lines: nothing to time or listen for.
  if (!Logger.isLevelEnabled('log')) {
    next();
    return;
  }
  const started = performance.now();
  let written = false;
  const write = (): void => {
    if (written) {
      return;
    }
    written = true;
    const fields = requestLogFields(req);
    const route = routeTemplate(req);
    const aborted = !res.writableFinished;
    logger.log(`${req.method} ${route ?? '(no route)'} ${res.statusCode}${aborted ? ' (client went away)' : ''}`, {
      requestId: fields.requestId,
      userId: fields.userId,
      agentId: fields.agentId,
      runId: fields.runId,
      method: req.method,
      route,
      status: res.statusCode,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      ...(aborted ? { aborted } : {}),
    });
  };
  res.once('finish', write);
  res.once('close', write);
  next();
}
