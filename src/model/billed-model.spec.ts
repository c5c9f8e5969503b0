import { describe, expect, it } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import { standIn } from '../common/testing/stand-in.js';
import { codeOf } from '../common/testing/refusals.js';
import { creditsFixture } from '../credits/testing/credits-fixture.js';
import { BilledModel, type EarlyHold } from './billed-model.js';
import type { ModelAnswer, ModelClient, ModelRequest } from './model-client.js';

const USER = 'user-1';
const KEY = 'chat:reply-1:1';
const BILLING = { userId: USER, reference: KEY, reason: 'chat_turn' as const };
/** About 3 credits of estimate (4 bytes a token, one credit per started thousand tokens). */
const REQUEST: ModelRequest = {
  model: 'm',
  system: 's',
  messages: [{ role: 'user', content: 'x'.repeat(9000) }],
  tools: [],
};
const ANSWER: ModelAnswer = {
  content: [],
  text: 'ok',
  stopReason: 'end_turn',
  usage: { inputTokens: 10, outputTokens: 5 },
};

/**
 * A BilledModel over the credits' real rules (CreditsService on the in-memory rows) and a model whose
 * answer is scripted; `holdsAtCall`: the holds as they stood when the model was called.
 */
function setUp(balance: number, answer: () => Promise<ModelAnswer> = async () => ANSWER) {
  const { rows, service: credits } = creditsFixture({ [USER]: balance });
  const holdsAtCall: Array<Map<string, { amount: number }>> = [];
  const client = standIn<ModelClient>({
    create: async () => {
      holdsAtCall.push(new Map(rows.holds));
      return answer();
    },
  });
  const billed = new BilledModel(client, credits);
  /** An early hold asked for as ChatTurnHolds asks for it. */
  const early = (amount: number): EarlyHold => ({
    amount,
    taken: credits.hold(USER, KEY, amount, 60_000).then((h) => h.reserved),
    used: false,
  });
  return { rows, billed, early, holdsAtCall };
}

describe('BilledModel.call with a hold taken early', () => {
  const estimate = BilledModel.estimate(REQUEST);

  it('uses the early hold when it covers the estimate: the call is made under it, then charged', async () => {
    expect(estimate).toBe(3);
    const { rows, billed, early, holdsAtCall } = setUp(100);
    const held = early(5);
    const answer = await billed.call(REQUEST, BILLING, new AbortController().signal, undefined, held);
    expect(held.used).toBe(true);
    expect(holdsAtCall[0]!.get(KEY)).toMatchObject({ amount: 5 });
    expect(answer).toMatchObject({ estimate, charge: { charged: 1, balance: 99 } });
    expect(rows.holds.size).toBe(0);
  });

  it('holds its own estimate under the same reference when the early hold is smaller', async () => {
    const { rows, billed, early, holdsAtCall } = setUp(100);
    await billed.call(REQUEST, BILLING, new AbortController().signal, undefined, early(2));
    expect(holdsAtCall[0]!.get(KEY)).toMatchObject({ amount: estimate });
    expect(rows.holds.size).toBe(0);
  });

  it('holds its estimate when the early hold was refused (the balance covers the estimate, not the early amount)', async () => {
    const { billed, early, holdsAtCall } = setUp(4);
    const held = early(10);
    expect(await held.taken).toBe(false);
    await billed.call(REQUEST, BILLING, new AbortController().signal, undefined, held);
    expect(holdsAtCall[0]!.get(KEY)).toMatchObject({ amount: estimate });
  });

  it('is NO_CREDITS, and gives the early hold back, when the estimate is over it and over the balance', async () => {
    const { rows, billed, early, holdsAtCall } = setUp(2);
    const held = early(2);
    expect(await held.taken).toBe(true);
    const refused = billed.call(REQUEST, BILLING, new AbortController().signal, undefined, held);
    expect(await codeOf(refused)).toBe('NO_CREDITS');
    expect(holdsAtCall).toHaveLength(0);
    expect(rows.holds.size).toBe(0);
    expect(rows.balances.get(USER)).toBe(2);
  });

  it('gives the early hold back, and charges nothing, when the model call fails', async () => {
    const { rows, billed, early } = setUp(100, async () => {
      throw new AppError('MODEL_ERROR', 'the model is down');
    });
    const failed = billed.call(REQUEST, BILLING, new AbortController().signal, undefined, early(5));
    expect(await codeOf(failed)).toBe('MODEL_ERROR');
    expect(rows.holds.size).toBe(0);
    expect(rows.ledgerRows).toHaveLength(0);
  });
});
