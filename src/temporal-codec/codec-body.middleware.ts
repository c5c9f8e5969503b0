import { Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { TOKEN_AUDIENCES } from '../auth/auth-user.js';
import type { AuthenticationBeforeBody } from '../auth/guards.js';
import { AppError } from '../common/app-error.js';
import { writeAppError, writeUnexpectedError } from '../common/error-filter.js';
import type { ApiReply, ApiRequest } from '../common/http.js';
import type { Settings } from '../config/settings.js';
import { setCodecCorsHeaders } from './codec-cors.middleware.js';
import { CODEC_COOKIE, CODEC_PATH, MAX_CODEC_BODY_BYTES } from './temporal-codec.controller.js';

/** The codec's payload routes, as declared (matched in any case, with or without a trailing slash). */
const PAYLOAD_ROUTES = new Set([`${CODEC_PATH}/decode`, `${CODEC_PATH}/encode`].map((r) => r.toLowerCase()));

/** Whether the request goes to a codec payload route (POST decode or encode): the only ones with the large limit. */
export function isCodecPayloadRoute(req: ApiRequest): boolean {
  const url = req.routeOptions.url;
  return req.method === 'POST' && !req.is404 && typeof url === 'string' && PAYLOAD_ROUTES.has(url.toLowerCase());
}

/** Largest body of `req`'s route: the codec payload routes' own limit, else `limit`. */
export function codecBodyLimit(req: ApiRequest, limit: number): number {
  return isCodecPayloadRoute(req) ? MAX_CODEC_BODY_BYTES : limit;
}

/**
 * The checks in front of the codec payload routes' large body limit (a Fastify preParsing hook): the
 * per-address limit and an admin's token are checked before a byte of the body is read, so nobody
 * else makes the API read up to MAX_CODEC_BODY_BYTES. Every other request passes on.
 */
export function codecBeforeBody(options: {
  settings: Settings;
  auth: AuthenticationBeforeBody;
}): (req: ApiRequest, reply: ApiReply, payload: Readable) => Promise<Readable | ApiReply> {
  const logger = new Logger('TemporalCodec');
  return async (req, reply, payload) => {
    if (!isCodecPayloadRoute(req)) {
      return payload;
    }
    // A refusal carries the CORS headers too, so the Temporal UI sees it as one (not a network error).
    setCodecCorsHeaders(options.settings, req, reply.raw);
    try {
      await options.auth.admin(req, { cookie: CODEC_COOKIE, audience: TOKEN_AUDIENCES.temporalCodec });
      return payload;
    } catch (err) {
      // The body was not read: close the connection rather than keep it for whatever follows.
      reply.header('connection', 'close');
      if (err instanceof AppError) {
        writeAppError(reply, err);
      } else {
        writeUnexpectedError(req, reply, err, logger);
      }
      return reply;
    }
  };
}
