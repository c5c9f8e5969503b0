import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure, TemporalFailure } from '@temporalio/common';

/**
 * The failure type of an error that has no code of the specification (a bug, a database error): the
 * run's timeline and the model see a generic message with a reference, the worker log the error.
 */
export const INTERNAL_FAILURE = 'INTERNAL_ERROR';

/** What an operator greps the worker log for: the ids every activity log line carries. */
export function activityReference(): string | undefined {
  try {
    const info = Context.current().info;
    return `workflow ${info.workflowExecution?.workflowId}, run ${info.workflowExecution?.runId}, activity ${info.activityId}, attempt ${info.attempt}`;
  } catch {
    return undefined; // not inside an activity
  }
}

/** The public message of an unexpected failure: no text of the error itself, only where to look. */
export function internalFailureMessage(reference: string | undefined): string {
  return `An unexpected error stopped this step${reference ? ` (reference: ${reference})` : ''}; the details are in the worker log`;
}

/** What the ports throw: an error with one of the specification's codes (AppError and its kin). */
interface CodedError extends Error {
  code: string;
  statusCode: number;
  retryable?: boolean;
  retryAfterSeconds?: number;
}

/**
 * A coded error the activities throw themselves. They do not import src/ (the worker fills their
 * ports), so not AppError: this carries the same spec code and HTTP status, and is classified like it.
 */
export class ActivityError extends Error implements CodedError {
  constructor(
    readonly code: 'PERMISSION_DENIED',
    readonly statusCode: 403,
    message: string,
  ) {
    super(message);
    this.name = 'ActivityError';
  }
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
 * waits on a durable timer) with the delay in its details. Anything without a spec code becomes
 * INTERNAL_ERROR (still retryable: a database restart passes) with a generic message, so no driver,
 * SQL or stack text reaches the history, the timeline or the model. Cancellation passes untouched.
 */
export function toApplicationFailure(err: unknown, reference?: string): unknown {
  if (err instanceof ApplicationFailure || err instanceof TemporalFailure) {
    return err;
  }
  if (!isCoded(err)) {
    if (err instanceof Error && err.name === 'AbortError') {
      return err;
    }
    return ApplicationFailure.create({
      type: INTERNAL_FAILURE,
      message: internalFailureMessage(reference),
      nonRetryable: false,
    });
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
    if (cancelled() && !isCoded(err) && !(err instanceof TemporalFailure)) {
      // Whatever the abort broke on the way out: the activity ends as cancelled, not failed.
      throw new CancelledFailure('The activity was cancelled');
    }
    const reference = activityReference();
    const failure = toApplicationFailure(err, reference);
    if (failure instanceof ApplicationFailure && failure.type === INTERNAL_FAILURE && failure !== err) {
      const detail = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
      Context.current().log.error(`unexpected failure (reference: ${reference ?? 'none'}): ${detail}`);
    }
    throw failure;
  }
}

function cancelled(): boolean {
  try {
    return Context.current().cancellationSignal.aborted;
  } catch {
    return false;
  }
}

/**
 * Refuses a task whose input is not an object (null, a string, an array) before any field is read:
 * every activity that takes an input is sent an object by the service's workflows, so such a task
 * was put on the queue by someone else. PERMISSION_DENIED, as for any other task the service did not send.
 */
export function requireObjectInput(input: unknown): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw ApplicationFailure.create({
      type: 'PERMISSION_DENIED',
      message: 'This task was not sent by the service: its input is not an object',
      nonRetryable: true,
    });
  }
}
