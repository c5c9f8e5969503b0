import { describe, expect, it } from '@jest/globals';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { AppError } from '../src/common/app-error.js';
import { ActivityError, INTERNAL_FAILURE, toApplicationFailure } from './failures.js';

describe('toApplicationFailure', () => {
  it('keeps a spec code and its message', () => {
    const failure = toApplicationFailure(new AppError('NO_CREDITS', 'Insufficient credit balance'));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'NO_CREDITS', message: 'Insufficient credit balance', nonRetryable: true });
  });

  it("classifies the activities' own coded error as AppError: its code, not retried", () => {
    const failure = toApplicationFailure(new ActivityError('PERMISSION_DENIED', 403, 'Another run'));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'PERMISSION_DENIED', message: 'Another run', nonRetryable: true });
  });

  it('turns an error without a spec code into a retryable INTERNAL_ERROR that shows none of its text', () => {
    const raw = Object.assign(new Error('relation "users" does not exist at character 15: SELECT * FROM users'), {
      code: '42P01',
    });
    const failure = toApplicationFailure(raw, 'workflow run-1, run r1, activity 3, attempt 2') as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(INTERNAL_FAILURE);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('workflow run-1, run r1, activity 3, attempt 2');
    expect(failure.message).not.toMatch(/relation|SELECT|42P01/);
    expect(failure.stack ?? '').not.toMatch(/relation/);
  });

  it('lets cancellation through untouched', () => {
    const cancelled = new CancelledFailure('cancelled');
    expect(toApplicationFailure(cancelled)).toBe(cancelled);
  });
});
