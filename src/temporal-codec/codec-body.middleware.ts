import { Logger } from '@nestjs/common';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { TOKEN_AUDIENCES } from '../auth/auth-user.js';
import type { AuthenticationBeforeBody } from '../auth/guards.js';
import { AppError } from '../common/app-error.js';
import { writeAppError, writeUnexpectedError } from '../common/error-filter.js';
import type { Settings } from '../config/settings.js';
import { setCodecCorsHeaders } from './codec-cors.middleware.js';
import { CODEC_COOKIE, MAX_CODEC_BODY_BYTES } from './temporal-codec.controller.js';

/**
 * The codec's payload routes as Express routes them below CODEC_PATH: POST decode or encode, in any
 * case, with or without a trailing slash. Nothing else gets the large body limit.
 */
const PAYLOAD_ROUTE = /^\/(?:decode|encode)\/?$/i;

/**
 * The large body parser of the codec's payload routes (mounted at CODEC_PATH), behind their checks:
 * the per-address limit and an admin's token are checked before a byte of the body is read, so
 * nobody else makes the API parse up to MAX_CODEC_BODY_BYTES. Every other request (any other path
 * or method) passes on to the API's usual, small parser.
 */
export function codecBodyParser(options: {
  settings: Settings;
  auth: AuthenticationBeforeBody;
  verify: (req: unknown, res: unknown, buf: Buffer) => void;
}): RequestHandler {
  const logger = new Logger('TemporalCodec');
  const parse = express.json({
    limit: MAX_CODEC_BODY_BYTES,
    strict: true,
    type: ['application/json', 'application/*+json'],
    verify: options.verify,
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'POST' || !PAYLOAD_ROUTE.test(req.path)) {
      next();
      return;
    }
    // A refusal carries the CORS headers too, so the Temporal UI sees it as one (not a network error).
    setCodecCorsHeaders(options.settings, req, res);
    options.auth.admin(req, { cookie: CODEC_COOKIE, audience: TOKEN_AUDIENCES.temporalCodec }).then(
      () => parse(req, res, next),
      (err: unknown) => {
        // The body was not read: close the connection rather than keep it for whatever follows.
        res.setHeader('connection', 'close');
        if (err instanceof AppError) {
          writeAppError(res, err);
        } else {
          writeUnexpectedError(req, res, err, logger);
        }
      },
    );
  };
}
