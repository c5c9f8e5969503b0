import { describe, expect, it } from '@jest/globals';
import { ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { executionGone } from './execution-gone.js';

/** An error as @grpc/grpc-js raises it for a status code. */
function grpcError(code: number): Error {
  return Object.assign(new Error(`${code} status`), { code, details: 'detail', metadata: {} });
}

describe('executionGone', () => {
  it('holds for a workflow not found, and gRPC NOT_FOUND or INVALID_ARGUMENT, raw or wrapped by the client', () => {
    expect(executionGone(new WorkflowNotFoundError('gone', 'agent-1', undefined))).toBe(true);
    for (const code of [5, 3]) {
      expect(executionGone(grpcError(code))).toBe(true);
      expect(executionGone(new ServiceError('Failed to describe workflow', { cause: grpcError(code) }))).toBe(true);
    }
  });

  it('does not hold for other codes, other errors or a ServiceError of its own', () => {
    // UNAVAILABLE and DEADLINE_EXCEEDED: the server is unreachable, the execution may well exist.
    for (const code of [14, 4]) {
      expect(executionGone(grpcError(code))).toBe(false);
      expect(executionGone(new ServiceError('Failed to describe workflow', { cause: grpcError(code) }))).toBe(false);
    }
    expect(executionGone(new Error('boom'))).toBe(false);
    expect(executionGone(new ServiceError('Unexpected error'))).toBe(false);
    expect(executionGone(undefined)).toBe(false);
  });
});
