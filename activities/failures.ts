import { ApplicationFailure } from '@temporalio/common';

/** What the ports throw: an error with one of the specification's codes (AppError and its kin). */
interface CodedError extends Error {
  code: string;
  statusCode: number;
  retryable?: boolean;
  retryAfterSeconds?: number;
}

/**
 * Our own errors carry a spec code and its HTTP status. Others (a database or network error, whose
 * `code` is a driver's code such as ECONNREFUSED) stay as they are: retryable.
 */
function isCoded(err: unknown): err is CodedError {
  return (
    err instanceof Error &&
    typeof (err as Partial<CodedError>).code === 'string' &&
    typeof (err as Partial<CodedError>).statusCode === 'number'
  );
}

/**
 * Classifies a failure once, at the activity boundary: the spec code becomes the failure type, and
 * whether retrying can help decides `nonRetryable`. A rate limit is handed to the workflow (which
 * waits on a durable timer) with the delay in its details.
 */
export function toApplicationFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || !isCoded(err)) {
    return err;
  }
  if (err.code === 'OUTGOING_RATE_LIMITED') {
    return ApplicationFailure.create({
      type: err.code,
      message: err.message,
      nonRetryable: true,
      details: [{ retryAfterSeconds: err.retryAfterSeconds ?? 60 }],
    });
  }
  return ApplicationFailure.create({ type: err.code, message: err.message, nonRetryable: err.retryable !== true });
}

export async function classified<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toApplicationFailure(err);
  }
}
