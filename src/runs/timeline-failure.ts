import type { temporal } from '@temporalio/proto';
import { INTERNAL_FAILURE, internalFailureMessage } from '../../activities/failures.js';
import { isErrorCode } from '../common/error-codes.js';

/** Where an operator finds a failure in the worker log (its lines carry these ids). */
export interface FailureReference {
  workflowId?: string;
  runId?: string | null;
}

/** Longest message of a failure the timeline shows (a site's own `error` is capped at 500 already). */
const MAX_FAILURE_MESSAGE = 1000;

/**
 * The failure as a user may read it. A failure with a code of the specification (or the activities'
 * own INTERNAL_ERROR, whose message holds only ids) keeps its message; any other one (a driver's or
 * a runtime's error, from a history written before the activities classified everything) shows a
 * generic message with the reference to grep the worker log for, never its own text.
 */
export function failureOf(
  failure: temporal.api.failure.v1.IFailure | null | undefined,
  reference: FailureReference,
  attempt?: number,
): { error: string; code: string } {
  let current = failure;
  // An activity failure wraps the application failure that carries our code.
  while (current?.cause && !current.applicationFailureInfo) {
    current = current.cause;
  }
  const type = current?.applicationFailureInfo?.type;
  if (type === undefined || type === null) {
    // A timeout or a cancellation: Temporal's own words, no error text of ours.
    return {
      error: (current?.message ?? failure?.message ?? 'failed').slice(0, MAX_FAILURE_MESSAGE),
      code: 'MODEL_ERROR',
    };
  }
  if (isErrorCode(type) || type === INTERNAL_FAILURE) {
    return { error: (current?.message ?? 'failed').slice(0, MAX_FAILURE_MESSAGE), code: type };
  }
  const where = [
    reference.workflowId && `workflow ${reference.workflowId}`,
    reference.runId && `run ${reference.runId}`,
    attempt !== undefined && `attempt ${attempt}`,
  ]
    .filter(Boolean)
    .join(', ');
  return { error: internalFailureMessage(where || undefined), code: INTERNAL_FAILURE };
}
