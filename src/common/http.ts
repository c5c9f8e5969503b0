import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The HTTP layer's types (the API runs on Fastify, app.factory.ts). Routes, guards and filters get
 * Fastify's request and reply; what runs before Fastify parses anything (correlation, access log,
 * metrics and security headers in one request hook; the MCP endpoints and the console through
 * middie) gets the Node request and response. Per-request state the two share (the request id and log fields, the
 * route, the answered error code) lives on the Node objects: `rawRequest`/`rawResponse` reach them
 * from either.
 */
export type ApiRequest = FastifyRequest;
export type ApiReply = FastifyReply;

/** The Node request as middie hands it on (it copies these from Fastify's request). */
export type NodeRequest = IncomingMessage & {
  originalUrl?: string;
  ip?: string;
  query?: unknown;
  body?: unknown;
};
export type NodeResponse = ServerResponse;
export type Next = (err?: unknown) => void;
/** A middleware on the Node request and response (mounted with app.use, run by middie). */
export type NodeMiddleware = (req: NodeRequest, res: NodeResponse, next: Next) => void;

/**
 * Runs `middlewares` one after the other, as one middleware: the next once the one before calls
 * `next()`, `next` with the first error.
 */
export function inOrder(middlewares: readonly NodeMiddleware[]): NodeMiddleware {
  return (req, res, next) => {
    const run = (i: number): void => {
      const middleware = middlewares[i];
      if (middleware === undefined) {
        next();
        return;
      }
      middleware(req, res, (err?: unknown) => (err === undefined ? run(i + 1) : next(err)));
    };
    run(0);
  };
}

/** Either request: what code that only reads headers or the address needs. */
export type AnyRequest = ApiRequest | NodeRequest;
export type AnyResponse = ApiReply | NodeResponse;

function isApiRequest(req: AnyRequest): req is ApiRequest {
  return 'raw' in req && typeof req.raw === 'object' && req.raw !== null && 'server' in req;
}

function isApiReply(res: AnyResponse): res is ApiReply {
  return 'raw' in res && typeof (res as ApiReply).code === 'function';
}

export function rawRequest(req: AnyRequest): NodeRequest {
  return isApiRequest(req) ? (req.raw as NodeRequest) : req;
}

export function rawResponse(res: AnyResponse): NodeResponse {
  return isApiReply(res) ? res.raw : res;
}

/** The request's path (no query string), as sent, below the mount point a middleware has. */
export function pathOf(req: { url?: string }): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The request's full path (no query string), whatever mount point a middleware has. */
export function fullPathOf(req: AnyRequest): string {
  const raw = rawRequest(req);
  return pathOf({ url: raw.originalUrl ?? raw.url });
}

/** The request's media type (lower case, no parameters), or '' without a Content-Type. */
export function mediaTypeOf(req: AnyRequest): string {
  const header = req.headers['content-type'];
  return typeof header === 'string' ? header.split(';')[0]!.trim().toLowerCase() : '';
}

/** Adds `field` to the answer's Vary header (once). */
export function vary(res: NodeResponse, field: string): void {
  const current = res.getHeader('vary');
  const fields = (Array.isArray(current) ? current.join(',') : String(current ?? ''))
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  if (fields.includes('*') || fields.some((f) => f.toLowerCase() === field.toLowerCase())) {
    return;
  }
  res.setHeader('vary', [...fields, field].join(', '));
}

/** Answers JSON on the Node response (middleware that answers before Fastify's routing). */
export function sendJson(res: NodeResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** Whether the request has a body, and it is of media type `type` (lower case): Express's `req.is(type)`. */
export function hasBodyOfType(req: AnyRequest, type: string): boolean {
  const length = req.headers['content-length'];
  const hasBody =
    req.headers['transfer-encoding'] !== undefined || (length !== undefined && !Number.isNaN(Number(length)));
  return hasBody && mediaTypeOf(req) === type;
}

/**
 * Which of `types` (full media types, in the server's order of preference) the request's Accept header
 * prefers, as Express's `req.accepts` chooses: the highest quality, then the most specific range, then
 * the Accept header's order, then the server's; the first type without an Accept header; undefined
 * when it accepts none.
 */
export function preferredType(req: AnyRequest, types: readonly string[]): string | undefined {
  const header = req.headers.accept;
  if (header === undefined || header.trim() === '') {
    return types[0];
  }
  const ranges = header.split(',').map((part, order) => {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.map((p) => /^q=([0-9.]+)$/.exec(p)?.[1]).find((v) => v !== undefined);
    return { range, q: q === undefined ? 1 : Number(q), order };
  });
  const scored = types.map((type, index) => {
    const [main] = type.split('/');
    let best = { q: 0, s: -1, order: Number.MAX_SAFE_INTEGER };
    for (const r of ranges) {
      const s = r.range === type ? 2 : r.range === `${main}/*` ? 1 : r.range === '*/*' ? 0 : -1;
      if (s > best.s || (s === best.s && s >= 0 && r.order < best.order)) {
        best = { q: r.q, s, order: r.order };
      }
    }
    return { type, index, ...best };
  });
  const ranked = scored
    .filter((c) => c.s >= 0 && c.q > 0)
    .sort((a, b) => b.q - a.q || b.s - a.s || a.order - b.order || a.index - b.index);
  return ranked[0]?.type;
}
