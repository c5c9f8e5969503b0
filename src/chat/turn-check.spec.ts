import { describe, expect, it } from '@jest/globals';
import { sameVersion, turnCheckPrelude, turnCheckResult, turnVersionOf } from './turn-check.js';

const ids = {
  userId: '0b7c9a52-55d5-4e7e-9a43-2f4f2f0c6a01',
  turn: '6f1e2d3c-4b5a-4978-8877-665544332211',
  sessionId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
};

describe('a turn check in the hold message', () => {
  it('carries its ids as quoted literals and its numbers as integers, two statements', () => {
    const prelude = turnCheckPrelude({ ...ids, maxSlots: 2, slotTtlMs: 150_000 });
    expect(prelude.statements).toBe(2);
    expect(prelude.text).toBe(
      `EXECUTE agentsite_chat_slot('${ids.userId}', '${ids.turn}', 2, 150000);\n` +
        `EXECUTE agentsite_chat_check('${ids.sessionId}', '${ids.userId}')`,
    );
    expect(prelude.prepare).toContain('PREPARE agentsite_chat_slot(');
    expect(prelude.prepare).toContain('PREPARE agentsite_chat_check(');
  });

  it('refuses anything but UUIDs and integers (the message has no parameters)', () => {
    const check = { ...ids, maxSlots: 2, slotTtlMs: 1000 };
    expect(() => turnCheckPrelude({ ...check, sessionId: "x'); DROP TABLE users; --" })).toThrow(/UUIDs/);
    expect(() => turnCheckPrelude({ ...check, userId: 'not-a-uuid' })).toThrow(/UUIDs/);
    expect(() => turnCheckPrelude({ ...check, maxSlots: 1.5 })).toThrow(/integers/);
    expect(() => turnCheckPrelude({ ...check, slotTtlMs: Number.NaN })).toThrow(/integers/);
  });

  it('reads the slot taken and the version; no row is no slot, no session', () => {
    const row = { turn_session: '812|member|team|active', turn_messages: '4:90', turn_sites: 'a:1' };
    expect(turnCheckResult([[{ slot: 2 }], [row]])).toEqual({
      slot: 2,
      version: { session: '812|member|team|active', messages: '4:90', sites: 'a:1' },
    });
    expect(turnCheckResult([[], []])).toEqual({ slot: null, version: undefined });
  });

  it('compares every part of a version', () => {
    const version = turnVersionOf({ turn_session: '1|||', turn_messages: '2:5', turn_sites: '' })!;
    expect(sameVersion(version, { ...version })).toBe(true);
    expect(sameVersion(version, { ...version, session: '2|||' })).toBe(false);
    expect(sameVersion(version, { ...version, messages: '4:9' })).toBe(false);
    expect(sameVersion(version, { ...version, sites: 'a:1' })).toBe(false);
    expect(sameVersion(version, undefined)).toBe(false);
  });
});
