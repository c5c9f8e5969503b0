import { AppError } from '../common/app-error.js';
import { describe, expect, it } from '@jest/globals';
import { standIn } from '../common/testing/stand-in.js';
import type { CreditsRepository } from './credits.repository.js';
import { CREDIT_HOLD_TTL_MS, CreditsService, creditsFor, creditsToReserve } from './credits.service.js';
import { FAKE_TRANSACTION, FakeCreditsRepository } from './testing/fake-credits.repository.js';
import { codeOf } from '../common/testing/refusals.js';

const USER = 'user-1';
const RUN_ID = '22222222-2222-4222-8222-222222222222';

function setUp(balance: number) {
  const rows = new FakeCreditsRepository();
  rows.balances.set(USER, balance);
  const service = new CreditsService(standIn<CreditsRepository>(rows), rows.hooks());
  return { rows, service };
}

describe('what a model turn costs', () => {
  it('is one credit per started thousand tokens, at least one', () => {
    expect(creditsFor({ inputTokens: 0, outputTokens: 0 })).toBe(1);
    expect(creditsFor({ inputTokens: 1000, outputTokens: 0 })).toBe(1);
    expect(creditsFor({ inputTokens: 1000, outputTokens: 1 })).toBe(2);
    expect(creditsFor({ inputTokens: 2500, outputTokens: 2500 })).toBe(5);
  });

  it('holds a request for its estimated input (4 bytes a token), at least one', () => {
    expect(creditsToReserve({})).toBe(1);
    expect(creditsToReserve({ text: 'x'.repeat(8000) })).toBe(3);
  });
});

describe('CreditsService.reserve (before a model call)', () => {
  it('holds the credits when the balance covers them', async () => {
    const { rows, service } = setUp(5);
    await service.reserve(USER, 'call-1', 5);
    expect(rows.holds.get('call-1')).toMatchObject({ userId: USER, amount: 5 });
  });

  it('refuses with NO_CREDITS (402) naming what is needed and what is left, when other holds take the rest', async () => {
    const { service } = setUp(5);
    await service.reserve(USER, 'call-1', 4);
    const err = (await service.reserve(USER, 'call-2', 2).catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('NO_CREDITS');
    expect(err.statusCode).toBe(402);
    expect(err.message).toBe('Insufficient credit balance: the model call needs 2 credits, 1 available');
  });

  it('renews the same call’s hold rather than counting it twice (a retried call)', async () => {
    const { service } = setUp(3);
    await service.reserve(USER, 'call-1', 3);
    await expect(service.reserve(USER, 'call-1', 3)).resolves.toBeUndefined();
  });

  it('frees the credits of a released or expired hold', async () => {
    const { rows, service } = setUp(3);
    await service.reserve(USER, 'call-1', 3);
    await service.release(USER, 'call-1');
    await service.reserve(USER, 'call-2', 3);
    const start = Date.now();
    rows.now = () => start + CREDIT_HOLD_TTL_MS + 1;
    await expect(service.reserve(USER, 'call-3', 3)).resolves.toBeUndefined();
  });

  it('answers NOT_FOUND for a user that does not exist', async () => {
    const { service } = setUp(3);
    expect(await codeOf(service.reserve('nobody', 'call-1', 1))).toBe('NOT_FOUND');
  });
});

describe('CreditsService.charge (after a model call)', () => {
  it('charges the amount, releases the hold of its reference and writes the ledger row', async () => {
    const { rows, service } = setUp(10);
    await service.reserve(USER, `run:${RUN_ID}:r:1`, 4);
    await expect(service.charge(USER, 4, 'model_turn', `run:${RUN_ID}:r:1`)).resolves.toEqual({
      charged: 4,
      balance: 6,
    });
    expect(rows.holds.size).toBe(0);
    const page = await service.ledger(USER, 10, undefined);
    expect(page.items[0]).toMatchObject({ amount: -4, reason: 'model_turn', balanceAfter: 6, runId: RUN_ID });
  });

  it("adds a run turn's usage to its run, once for a repeated reference", async () => {
    const { rows, service } = setUp(10);
    const turn = { runId: RUN_ID, inputTokens: 1200, outputTokens: 300 };
    await service.charge(USER, 2, 'model_turn', `run:${RUN_ID}:r:1`, turn);
    await service.charge(USER, 2, 'model_turn', `run:${RUN_ID}:r:1`, turn);
    await service.charge(USER, 1, 'model_turn', `run:${RUN_ID}:r:2`, { ...turn, inputTokens: 10 });
    expect(rows.runUsage.get(RUN_ID)).toEqual({ inputTokens: 1210, outputTokens: 600, credits: 3 });
    expect(rows.balances.get(USER)).toBe(7);
  });

  it('charges no more than the balance (usage already happened)', async () => {
    const { service } = setUp(3);
    await expect(service.charge(USER, 5, 'chat_turn')).resolves.toEqual({ charged: 3, balance: 0 });
  });

  it('charges a repeated reference once (a retried activity)', async () => {
    const { rows, service } = setUp(10);
    await service.charge(USER, 4, 'model_turn', 'ref-1');
    await expect(service.charge(USER, 4, 'model_turn', 'ref-1')).resolves.toEqual({ charged: 4, balance: 6 });
    expect(rows.ledgerRows).toHaveLength(1);
  });

  it('answers NOT_FOUND for a user that does not exist', async () => {
    const { service } = setUp(3);
    expect(await codeOf(service.charge('nobody', 1, 'chat_turn'))).toBe('NOT_FOUND');
  });
});

describe('CreditsService.adjust, setBalance and assertCredits', () => {
  it('adds and removes credits through the ledger, refusing to go below zero (NO_CREDITS)', async () => {
    const { rows, service } = setUp(5);
    await expect(service.adjust(USER, 10, 'purchase', 'purchase:1')).resolves.toBe(15);
    await expect(service.adjust(USER, -15, 'admin_adjustment')).resolves.toBe(0);
    expect(await codeOf(service.adjust(USER, -1, 'admin_adjustment'))).toBe('NO_CREDITS');
    expect(rows.balances.get(USER)).toBe(0);
    expect(rows.ledgerRows.map((r) => r.delta)).toEqual([10, -15]);
  });

  it('answers NOT_FOUND when adjusting a user that does not exist', async () => {
    const { service } = setUp(5);
    expect(await codeOf(service.adjust('nobody', 1, 'purchase'))).toBe('NOT_FOUND');
  });

  it('sets a balance by one adjustment of the difference, and writes nothing when it is already there', async () => {
    const { rows, service } = setUp(5);
    await expect(service.setBalance(USER, 12, 'admin_adjustment')).resolves.toBe(12);
    await expect(service.setBalance(USER, 12, 'admin_adjustment')).resolves.toBe(12);
    expect(rows.ledgerRows.map((r) => r.delta)).toEqual([7]);
  });

  it('asserts a positive balance', async () => {
    await expect(setUp(1).service.assertCredits(USER)).resolves.toBeUndefined();
    expect(await codeOf(setUp(0).service.assertCredits(USER))).toBe('NO_CREDITS');
  });

  it('records opening credits only when there are some', async () => {
    const { rows, service } = setUp(0);
    await service.recordOpening(FAKE_TRANSACTION, USER, 0, 'signup_grant');
    await service.recordOpening(FAKE_TRANSACTION, USER, 100, 'signup_grant');
    expect(rows.ledgerRows.map((r) => r.delta)).toEqual([100]);
  });
});

describe('CreditsService.ledger (pages)', () => {
  it('pages newest first with an opaque cursor, and refuses a forged one (VALIDATION_ERROR)', async () => {
    const { service } = setUp(100);
    for (let i = 0; i < 5; i += 1) {
      await service.charge(USER, 1, 'chat_turn');
    }
    const first = await service.ledger(USER, 3, undefined);
    expect(first.items.map((e) => e.balanceAfter)).toEqual([95, 96, 97]);
    const second = await service.ledger(USER, 3, first.nextCursor!);
    expect(second.items.map((e) => e.balanceAfter)).toEqual([98, 99]);
    expect(second.nextCursor).toBeNull();
    expect(await codeOf(service.ledger(USER, 3, Buffer.from('ledger:0').toString('base64url')))).toBe(
      'VALIDATION_ERROR',
    );
  });
});
