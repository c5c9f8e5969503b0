import { describe, expect, it } from '@jest/globals';
import { creditsFixture } from '../credits/testing/credits-fixture.js';
import { ChatTurnHolds, EARLY_HOLD_SESSIONS, earlyHoldAmount } from './chat-turn-holds.js';

const USER = 'user-1';
const SESSION = 'token_hash:abc';

function setUp(balance: number) {
  const { rows, service } = creditsFixture({ [USER]: balance });
  const holds = new ChatTurnHolds(service);
  return { rows, holds, user: { id: USER, credits: balance } };
}

describe('ChatTurnHolds: a turn’s first call held while its session is read', () => {
  it('holds nothing early for a session this process has not served', () => {
    const { rows, holds, user } = setUp(100);
    expect(holds.early(user, SESSION, 'Hello', 'chat:r:1')).toBeUndefined();
    expect(rows.holds.size).toBe(0);
  });

  it('holds the last call’s estimate, a quarter more, and the new message’s, under the first call’s reference', async () => {
    const { rows, holds, user } = setUp(100);
    holds.remember(USER, SESSION, 8);
    const early = holds.early(user, SESSION, 'x'.repeat(5000), 'chat:r:1')!;
    expect(early.amount).toBe(10 + 2);
    expect(earlyHoldAmount(8, 'x'.repeat(5000))).toBe(12);
    expect(await early.taken).toBe(true);
    expect(rows.holds.get('chat:r:1')).toMatchObject({ userId: USER, amount: 12 });
    // Another session of the user, or the same session key of another user, is not known.
    expect(holds.early(user, 'token_hash:other', 'Hello', 'chat:r2:1')).toBeUndefined();
    expect(holds.early({ id: 'user-2', credits: 100 }, SESSION, 'Hello', 'chat:r3:1')).toBeUndefined();
  });

  it('holds nothing early when the balance authentication read is under the amount', () => {
    const { rows, holds } = setUp(100);
    holds.remember(USER, SESSION, 8);
    expect(holds.early({ id: USER, credits: 10 }, SESSION, 'Hi', 'chat:r:1')).toBeUndefined();
    expect(rows.holds.size).toBe(0);
  });

  it('keeps the sessions most recently estimated, up to EARLY_HOLD_SESSIONS', () => {
    const { holds, user } = setUp(100);
    holds.remember(USER, 'first', 1);
    holds.remember(USER, 'second', 1);
    holds.remember(USER, 'first', 2); // estimated again: most recent
    for (let i = 0; i < EARLY_HOLD_SESSIONS - 1; i += 1) {
      holds.remember(USER, `s${i}`, 1);
    }
    expect(holds.early(user, 'second', 'Hi', 'chat:a:1')).toBeUndefined();
    expect(holds.early(user, 'first', 'Hi', 'chat:b:1')?.amount).toBe(earlyHoldAmount(2, 'Hi'));
  });

  it('gives back an early hold no call took over; one a call took is the call’s to settle', async () => {
    const { rows, holds, user } = setUp(100);
    holds.remember(USER, SESSION, 4);
    const unused = holds.early(user, SESSION, 'Hi', 'chat:unused:1')!;
    const used = holds.early(user, SESSION, 'Hi', 'chat:used:1')!;
    used.used = true;
    await holds.settle(USER, 'chat:unused:1', unused);
    await holds.settle(USER, 'chat:used:1', used);
    await holds.settle(USER, 'chat:none:1', undefined);
    expect([...rows.holds.keys()]).toEqual(['chat:used:1']);
  });
});
