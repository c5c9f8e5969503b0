import { ERROR_STATUS, type ErrorCode } from './error-codes.js';

/** One invalid field of a request, named by its path (`email`, `trigger.cron`, `schema[2].type`). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The body every error answer of the service API has. */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  statusCode: number;
  details?: FieldProblem[];
}

/** The one error type of the service: a code of the specification, a human message, optional field details. */
export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldProblem[],
    /** Seconds to send in a Retry-After header (429 answers). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.message, code: this.code, statusCode: this.statusCode };
    if (this.details !== undefined) {
      body.details = this.details;
    }
    return body;
  }

  static validation(details: FieldProblem[], message = 'Request validation failed'): AppError {
    return new AppError('VALIDATION_ERROR', message, details);
  }
}
