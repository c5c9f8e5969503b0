import { performance } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import { requestLogFields } from './correlation.js';
import { type ApiRequest, type Next, type NodeRequest, type NodeResponse, rawRequest } from './http.js';

/** Where the route a request was handed to is kept, on the Node request (see noteRoute). */
const ROUTE_TEMPLATE = Symbol('routeTemplate');

type RoutedRequest = NodeRequest & { [ROUTE_TEMPLATE]?: string };

/** The catch-all OPTIONS route @fastify/cors adds for preflights: not a route of the API's. */
const CORS_PREFLIGHT_ROUTE = '*';

/**
 * A Fastify hook once the body is read (preValidation): the route the request goes to, as declared
 * (`/api/agents/:id`). Not-found answers, requests answered before (a refused body, a middleware's
 * answer, a preflight) and OPTIONS requests CORS left to its catch-all route (answered NOT_FOUND)
 * have none.
 */
export function noteRoute(req: ApiRequest, _reply: unknown, done: () => void): void {
  const url = req.routeOptions.url;
  if (!req.is404 && typeof url === 'string' && url !== CORS_PREFLIGHT_ROUTE) {
    (rawRequest(req) as RoutedRequest)[ROUTE_TEMPLATE] = url;
  }
  done();
}

/** Records `route` as the request's route (what noteRoute does; for tests). */
export function setRouteTemplate(req: NodeRequest, route: string): void {
  (req as RoutedRequest)[ROUTE_TEMPLATE] = route;
}

/** The route a request was handed to, as declared (`/api/agents/:id`), never the raw path; null when none. */
export function routeTemplate(req: NodeRequest): string | null {
  return (req as RoutedRequest)[ROUTE_TEMPLATE] ?? null;
}

const logger = new Logger('http');

/**
 * One line per request, written when the answer is sent (or the client went away): method, route
 * template, status, duration, and the request's ids. Never the path's values, the query string,
 * headers or bodies: those carry ids of other users' objects, tokens and run data.
 */
export function accessLogMiddleware(req: NodeRequest, res: NodeResponse, next: Next): void {
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
