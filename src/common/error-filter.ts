import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from './app-error.js';
import { correlationIdOf } from './correlation.js';

/** The body of an unexpected failure: the only answer whose code is not from the specification's table. */
export const INTERNAL_ERROR_CODE = 'INTERNAL_ERROR';

/** Maps Nest's own HTTP exceptions (routing, body parsing) onto the specification's codes. */
function fromHttpException(exception: HttpException, req: Request): AppError | undefined {
  const status = exception.getStatus();
  switch (status) {
    case HttpStatus.NOT_FOUND:
      return new AppError('NOT_FOUND', `No route for ${req.method} ${req.originalUrl.split('?')[0]}`);
    case HttpStatus.METHOD_NOT_ALLOWED:
      return new AppError('NOT_FOUND', `No route for ${req.method} ${req.originalUrl.split('?')[0]}`);
    case HttpStatus.BAD_REQUEST:
    case HttpStatus.PAYLOAD_TOO_LARGE:
    case HttpStatus.UNSUPPORTED_MEDIA_TYPE:
      return AppError.validation([{ field: 'body', message: exception.message }], 'Request body is invalid');
    default:
      return undefined;
  }
}

/** Turns anything thrown while answering a request into the error body. */
export function toAppError(exception: unknown, req: Request): AppError | undefined {
  if (exception instanceof AppError) {
    return exception;
  }
  if (exception instanceof HttpException) {
    return fromHttpException(exception, req);
  }
  const bodyParserError = bodyParserProblem(exception);
  if (bodyParserError !== undefined) {
    return bodyParserError;
  }
  return undefined;
}

/** Errors raised by Express's body parsers carry a `type`; all of them are the client's fault. */
export function bodyParserProblem(exception: unknown): AppError | undefined {
  if (typeof exception !== 'object' || exception === null || !('type' in exception)) {
    return undefined;
  }
  const type = (exception as { type: unknown }).type;
  const messages: Record<string, string> = {
    'entity.parse.failed': 'Request body is not valid JSON',
    'entity.too.large': 'Request body is too large',
    'encoding.unsupported': 'Request body encoding is not supported',
    'charset.unsupported': 'Request body charset is not supported',
    'request.aborted': 'Request body was aborted',
    'request.size.invalid': 'Request body size does not match Content-Length',
    'entity.verify.failed': 'Request body is not valid UTF-8',
    'stream.encoding.set': 'Request body could not be read',
    'parameters.too.many': 'Request body has too many parameters',
  };
  if (typeof type !== 'string' || !(type in messages)) {
    return undefined;
  }
  return AppError.validation([{ field: 'body', message: messages[type] }], messages[type]);
}

/** Where an answer's error code is kept for code that sees only the finished response (the HTTP metrics). */
export const ERROR_CODE_LOCAL = 'errorCode';

/** The error code the request was answered with, if it was answered with an error body. */
export function answeredErrorCode(res: Response): string | undefined {
  const code: unknown = (res.locals as Record<string, unknown> | undefined)?.[ERROR_CODE_LOCAL];
  return typeof code === 'string' ? code : undefined;
}

function noteErrorCode(res: Response, code: string): void {
  if (res.locals !== undefined) {
    res.locals[ERROR_CODE_LOCAL] = code;
  }
}

export function writeAppError(res: Response, error: AppError): void {
  noteErrorCode(res, error.code);
  if (error.retryAfterSeconds !== undefined) {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  }
  res.status(error.statusCode).json(error.toBody());
}

@Catch()
export class AppErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const error = toAppError(exception, req);
    if (res.headersSent) {
      // A stream already started (SSE): nothing more can be written as an error body.
      this.logger.warn(`${correlationIdOf(req)} error after headers were sent: ${describe(exception)}`);
      res.end();
      return;
    }
    if (error !== undefined) {
      if (error.statusCode >= 500) {
        this.logger.warn(`${correlationIdOf(req)} ${req.method} ${req.path} -> ${error.code}: ${error.message}`);
      }
      writeAppError(res, error);
      return;
    }
    writeUnexpectedError(req, res, exception, this.logger);
  }
}

/**
 * The answer to an unexpected failure (a logged 500 whose body names only the correlation id), for
 * the filter and for middleware that runs before Nest's routing.
 */
export function writeUnexpectedError(req: Request, res: Response, exception: unknown, logger: Logger): void {
  const correlationId = correlationIdOf(req);
  noteErrorCode(res, INTERNAL_ERROR_CODE);
  logger.error(
    `${correlationId} ${req.method} ${req.path} failed unexpectedly`,
    exception instanceof Error ? exception.stack : String(exception),
  );
  res.status(HttpStatus.INTERNAL_SERVER_ERROR).json({
    error: `Internal server error (correlation id ${correlationId})`,
    code: INTERNAL_ERROR_CODE,
    statusCode: HttpStatus.INTERNAL_SERVER_ERROR,
  });
}

function describe(exception: unknown): string {
  return exception instanceof Error ? `${exception.name}: ${exception.message}` : String(exception);
}
