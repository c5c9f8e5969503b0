import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { AppError } from './app-error.js';
import { correlationIdOf } from './correlation.js';
import {
  type AnyRequest,
  type AnyResponse,
  type ApiReply,
  fullPathOf,
  type NodeResponse,
  rawResponse,
  sendJson,
} from './http.js';

/** The body of an unexpected failure: the only answer whose code is not from the specification's table. */
export const INTERNAL_ERROR_CODE = 'INTERNAL_ERROR';

/** Maps Nest's own HTTP exceptions (routing, body parsing) onto the specification's codes. */
function fromHttpException(exception: HttpException, req: AnyRequest): AppError | undefined {
  const status = exception.getStatus();
  switch (status) {
    case HttpStatus.NOT_FOUND:
      return notFound(req);
    case HttpStatus.METHOD_NOT_ALLOWED:
      return notFound(req);
    case HttpStatus.BAD_REQUEST:
    case HttpStatus.PAYLOAD_TOO_LARGE:
    case HttpStatus.UNSUPPORTED_MEDIA_TYPE:
      return AppError.validation([{ field: 'body', message: exception.message }], 'Request body is invalid');
    default:
      return undefined;
  }
}

/** The NOT_FOUND of a request no route takes. */
export function notFound(req: AnyRequest): AppError {
  return new AppError('NOT_FOUND', `No route for ${req.method} ${fullPathOf(req)}`);
}

/** Turns anything thrown while answering a request into the error body. */
export function toAppError(exception: unknown, req: AnyRequest): AppError | undefined {
  if (exception instanceof AppError) {
    return exception;
  }
  if (exception instanceof HttpException) {
    return fromHttpException(exception, req);
  }
  const bodyParserError = bodyParserProblem(exception);
  if (bodyParserError !== undefined) {
    // A refused body on the webhook routes: with the webhook's own code.
    const webhook = fullPathOf(req).toLowerCase().startsWith('/api/webhooks/');
    return webhook
      ? new AppError('WEBHOOK_PAYLOAD_INVALID', bodyParserError.message, bodyParserError.details)
      : bodyParserError;
  }
  return undefined;
}

/** Errors raised by the body parsers (src/common/body-parsers.ts) carry a `type`; all of them are the client's fault. */
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

type AnsweredResponse = NodeResponse & { [ERROR_CODE_LOCAL]?: string };

/** The error code the request was answered with, if it was answered with an error body. */
export function answeredErrorCode(res: NodeResponse): string | undefined {
  const code: unknown = (res as AnsweredResponse)[ERROR_CODE_LOCAL];
  return typeof code === 'string' ? code : undefined;
}

function noteErrorCode(res: AnyResponse, code: string): void {
  (rawResponse(res) as AnsweredResponse)[ERROR_CODE_LOCAL] = code;
}

/** Answers `body` with `status`: through Fastify's reply when there is one, else on the Node response. */
function sendBody(res: AnyResponse, status: number, body: unknown): void {
  if (res === rawResponse(res)) {
    sendJson(res as NodeResponse, status, body);
    return;
  }
  void (res as ApiReply).code(status).type('application/json; charset=utf-8').send(body);
}

export function writeAppError(res: AnyResponse, error: AppError): void {
  noteErrorCode(res, error.code);
  if (error.retryAfterSeconds !== undefined) {
    rawResponse(res).setHeader('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  }
  sendBody(res, error.statusCode, error.toBody());
}

@Catch()
export class AppErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<AnyRequest>();
    const res = ctx.getResponse<AnyResponse>();
    const error = toAppError(exception, req);
    const raw = rawResponse(res);
    if (raw.headersSent || (res !== raw && (res as ApiReply).sent)) {
      // A stream already started (SSE): nothing more can be written as an error body.
      this.logger.warn(`${correlationIdOf(req)} error after headers were sent: ${describe(exception)}`);
      raw.end();
      return;
    }
    if (error !== undefined) {
      if (error.statusCode >= 500) {
        this.logger.warn(`${correlationIdOf(req)} ${req.method} ${fullPathOf(req)} -> ${error.code}: ${error.message}`);
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
export function writeUnexpectedError(req: AnyRequest, res: AnyResponse, exception: unknown, logger: Logger): void {
  const correlationId = correlationIdOf(req);
  noteErrorCode(res, INTERNAL_ERROR_CODE);
  logger.error(
    `${correlationId} ${req.method} ${fullPathOf(req)} failed unexpectedly`,
    exception instanceof Error ? exception.stack : String(exception),
  );
  sendBody(res, HttpStatus.INTERNAL_SERVER_ERROR, {
    error: `Internal server error (correlation id ${correlationId})`,
    code: INTERNAL_ERROR_CODE,
    statusCode: HttpStatus.INTERNAL_SERVER_ERROR,
  });
}

function describe(exception: unknown): string {
  return exception instanceof Error ? `${exception.name}: ${exception.message}` : String(exception);
}
