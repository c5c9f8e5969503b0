import { describe, expect, it } from '@jest/globals';
import { decodeLedgerCursor, encodeLedgerCursor, runIdOf } from './ledger-entry.js';

describe('ledger entries', () => {
  it('names the run of a model turn from its charge reference, and no run for anything else', () => {
    const runId = '0f9c2a4e-1b2c-4d3e-8f00-123456789abc';
    // The reference activities/index.ts gives a run's model turn.
    expect(runIdOf(`run:${runId}:0197-temporal-run:7`)).toBe(runId);
    expect(runIdOf(`chat:${runId}:1`)).toBeNull();
    expect(runIdOf('run:not-a-uuid:x:1')).toBeNull();
    expect(runIdOf(null)).toBeNull();
  });

  it('round-trips its cursor and refuses anything else with VALIDATION_ERROR on `cursor`', () => {
    expect(decodeLedgerCursor(encodeLedgerCursor('12345'))).toBe('12345');
    for (const raw of [
      '',
      'abc',
      Buffer.from('ledger:0').toString('base64url'),
      Buffer.from('12').toString('base64url'),
    ]) {
      expect(() => decodeLedgerCursor(raw)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
  });
});
