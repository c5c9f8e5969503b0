import { describe, expect, it } from '@jest/globals';
import vm from 'node:vm';
import { explainError } from './http.js';

describe('explainError', () => {
  it("names fetch's cause (from Node's realm, which `instanceof Error` in a suite can miss)", async () => {
    const failed: unknown = await fetch('http://127.0.0.1:10080/').catch((err: unknown) => err);
    expect(explainError(failed)).toBe('fetch failed (bad port)');
  });

  it('follows codes and causes of an error made in another realm, and says what a non-error is', () => {
    const made = vm.runInNewContext(
      "const e = new Error('connect failed'); e.code = 'ECONNREFUSED'; new TypeError('fetch failed', { cause: e })",
    ) as unknown;
    expect(explainError(made)).toBe('fetch failed (connect failed [ECONNREFUSED])');
    expect(explainError('plain')).toBe('plain');
  });
});
