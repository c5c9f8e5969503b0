import { AppError } from '../common/app-error.js';

/**
 * gRPC codes of a call to Temporal that may pass if made again: the server was overloaded or away
 * (UNAVAILABLE, RESOURCE_EXHAUSTED), the call ran out of time (DEADLINE_EXCEEDED; the update may have
 * got through, and the same update id makes a repeat find it), or the update-with-start's two
 * operations could not be carried out together (FAILED_PRECONDITION "Update-with-Start could not be
 * executed": the dev server says so when its store times out under load).
 */
const GRPC = { DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, UNAVAILABLE: 14 } as const;
const TRANSIENT_CODES = new Set<number>([GRPC.UNAVAILABLE, GRPC.DEADLINE_EXCEEDED, GRPC.RESOURCE_EXHAUSTED]);
const MULTI_OPERATION_FAILED = /update-with-start could not be executed/i;

/** Whether an error of the enqueue's update-with-start is one that may pass on another attempt. */
export function isTransientTemporalError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Object && depth < 5; depth += 1) {
    const { code, details, message, name } = e as {
      code?: unknown;
      details?: unknown;
      message?: unknown;
      name?: unknown;
    };
    if (name === 'WorkflowUpdateRPCTimeoutOrCancelledError') {
      return true;
    }
    if (typeof code === 'number' && TRANSIENT_CODES.has(code)) {
      return true;
    }
    if (
      code === GRPC.FAILED_PRECONDITION &&
      [details, message].some((text) => typeof text === 'string' && MULTI_OPERATION_FAILED.test(text))
    ) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** When a client refused for a Temporal that did not take the run is told to come back (Retry-After). */
export const TEMPORAL_BUSY_RETRY_SECONDS = 5;

/**
 * The run could not be handed to Temporal after a few tries (it is overloaded or away): nothing was
 * queued, and the client is told to retry shortly (RATE_LIMITED with Retry-After, the specification's
 * one "come back later" code). Retryable when an activity throws it (a schedule's firing).
 */
export class TemporalBusyError extends AppError {
  readonly retryable = true;

  constructor() {
    super(
      'RATE_LIMITED',
      'The run could not be queued right now; retry in a few seconds',
      undefined,
      TEMPORAL_BUSY_RETRY_SECONDS,
    );
  }
}
