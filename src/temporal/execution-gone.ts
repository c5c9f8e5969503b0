import { isGrpcServiceError, ServiceError, WorkflowNotFoundError } from '@temporalio/client';

/** gRPC NOT_FOUND: the execution is gone (Temporal's retention, or deleted by an operator). */
const GRPC_NOT_FOUND = 5;
/**
 * gRPC INVALID_ARGUMENT: Temporal cannot read the execution's ids (a row whose run id is not one):
 * such an execution can never be found, so it is as gone as a deleted one.
 */
const GRPC_INVALID_ARGUMENT = 3;

/**
 * Whether a call about one execution (describe, its history, its deletion) failed because there is
 * no such execution to read: the client's WorkflowNotFoundError, or gRPC NOT_FOUND or
 * INVALID_ARGUMENT, raw (the workflow service's own calls) or as the cause of the ServiceError the
 * client's handles wrap other codes in.
 */
export function executionGone(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) {
    return true;
  }
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && (grpc.code === GRPC_NOT_FOUND || grpc.code === GRPC_INVALID_ARGUMENT);
}
