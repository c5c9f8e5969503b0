import { isUtf8 } from 'node:buffer';
import { parse as parseQuery } from 'node:querystring';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ApiRequest } from './http.js';

/**
 * A body the parsers refuse. Its `type` names the problem (the names body-parser gave them, which
 * bodyParserProblem in error-filter.ts maps to the API's error body).
 */
export class BodyParserError extends Error {
  override readonly name = 'BodyParserError';

  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** The API's body parsing, as registered on Fastify by createApp. */
export interface BodyParsing {
  /** Largest body, in bytes, for `req`'s route. */
  limitFor(req: ApiRequest): number;
  /** Whether `req`'s route takes its body as the bytes that arrived (any type): Stripe's webhook. */
  rawBytes(req: ApiRequest): boolean;
}

/** Most parameters a form body may have (body-parser's default). */
const MAX_FORM_PARAMETERS = 1000;

/**
 * Reads the whole body as it arrived, refusing it past `limit` (by its Content-Length before a byte is
 * read, or as it streams) or when it is compressed (nothing is inflated).
 */
function readBody(req: ApiRequest, payload: Readable, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    return Promise.reject(new BodyParserError('encoding.unsupported', `unsupported content encoding "${encoding}"`));
  }
  if (length !== undefined && length > limit) {
    return Promise.reject(new BodyParserError('entity.too.large', 'request entity too large'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = (): void => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
      payload.removeListener('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        reject(new BodyParserError('entity.too.large', 'request entity too large'));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      if (length !== undefined && received !== length) {
        reject(new BodyParserError('request.size.invalid', 'request size did not match content length'));
        return;
      }
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (): void => {
      cleanup();
      reject(new BodyParserError('request.aborted', 'request aborted'));
    };
    const onAborted = onError;
    payload.on('data', onData);
    payload.once('end', onEnd);
    payload.once('error', onError);
    payload.once('aborted', onAborted);
  });
}

function charsetOf(req: ApiRequest): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.headers['content-type'] ?? '');
  return match?.[1]?.toLowerCase();
}

/** Text bodies must be valid UTF-8: a decoder would otherwise replace bad bytes silently. */
function utf8Text(bytes: Buffer): string {
  if (!isUtf8(bytes)) {
    throw new BodyParserError('entity.verify.failed', 'Request body is not valid UTF-8');
  }
  return bytes.toString('utf8');
}

/** JSON, strict, in UTF-8: an object or an array at the top (an empty body is an empty object). */
function parseJson(req: ApiRequest, bytes: Buffer): unknown {
  const charset = charsetOf(req);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new BodyParserError('charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`);
  }
  const text = utf8Text(bytes);
  if (text.length === 0) {
    return {};
  }
  // JSON's whitespace (space, tab, line feed, carriage return) may come first.
  const first = text.trimStart().charAt(0);
  if (first !== '{' && first !== '[') {
    throw new BodyParserError('entity.parse.failed', 'Request body is not a JSON object or array');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BodyParserError('entity.parse.failed', 'Request body is not valid JSON');
  }
}

/** A URL-encoded form: flat fields (no nesting), at most MAX_FORM_PARAMETERS. */
function parseForm(req: ApiRequest, bytes: Buffer): unknown {
  const charset = charsetOf(req) ?? 'utf-8';
  if (charset !== 'utf-8') {
    throw new BodyParserError('charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`);
  }
  const text = utf8Text(bytes);
  if (text.length === 0) {
    return {};
  }
  if (text.split('&').length > MAX_FORM_PARAMETERS) {
    throw new BodyParserError('parameters.too.many', 'too many parameters');
  }
  return { ...parseQuery(text, undefined, undefined, { maxKeys: MAX_FORM_PARAMETERS }) };
}

/**
 * Replaces Fastify's parsers with the API's: JSON (`application/json`, `application/*+json`),
 * URL-encoded forms, and the raw bytes of Stripe's webhook whatever their type. A body of any other
 * type is not read (the route sees none, so its validation answers). Every refusal is a
 * BodyParserError, which Nest's error handler hands to the error filter.
 */
export function registerBodyParsers(fastify: FastifyInstance, parsing: BodyParsing): void {
  fastify.removeAllContentTypeParsers();
  const parser =
    (parse: (req: ApiRequest, bytes: Buffer) => unknown) =>
    async (req: ApiRequest, payload: Readable): Promise<unknown> => {
      const bytes = await readBody(req, payload, parsing.limitFor(req));
      return parsing.rawBytes(req) ? bytes : parse(req, bytes);
    };
  fastify.addContentTypeParser('application/json', parser(parseJson));
  fastify.addContentTypeParser(/^application\/[^;\s]*\+json(?:$|[;\s])/i, parser(parseJson));
  fastify.addContentTypeParser('application/x-www-form-urlencoded', parser(parseForm));
  fastify.addContentTypeParser('*', async (req: ApiRequest, payload: Readable): Promise<unknown> => {
    return parsing.rawBytes(req) ? readBody(req, payload, parsing.limitFor(req)) : undefined;
  });
}
