import { describe, expect, it } from '@jest/globals';
import { counted } from '../runs/testing/fixtures.js';
import { MISSING_CHARGE_FAILS_AFTER_MS, RECONCILE_AFTER_MS } from './billing.service.js';
import { TIER_LIMITS } from './tiers.js';
import { billingFixture, USER } from './testing/billing-fixture.js';
import { refusal } from '../common/testing/refusals.js';

const CARD = { brand: 'visa', last4: '4242', ref: 'pm_1' };

describe('BillingService.describe (plan limits)', () => {
  it("shows the tier's limits, and the free tier's while the subscription is past due", async () => {
    const { rows, service } = billingFixture({ balance: 7 });
    rows.users.get(USER)!.tier = 'team';
    const active = await service.describe(USER);
    expect(active).toMatchObject({ tier: 'team', credits: 7, provider: 'stripe', publishableKey: 'pk_fake' });
    expect(active.limits.workspaces).toBe(5);
    rows.users.get(USER)!.subscriptionStatus = 'past_due';
    const overdue = await service.describe(USER);
    expect(overdue.limits.workspaces).toBe(0);
    expect(overdue.limits.agents).toBe(3);
  });

  it('lists every tier with its limits and price, lowest first, whatever the tier in force', async () => {
    const { rows, service } = billingFixture({ balance: 7 });
    rows.users.get(USER)!.subscriptionStatus = 'past_due';
    const { plans } = await service.describe(USER);
    expect(plans.map((p) => p.tier)).toEqual(['free', 'pro', 'harness', 'team']);
    expect(plans.map((p) => p.priceCents)).toEqual([0, 2000, 5000, 10000]);
    expect(plans.map((p) => p.webhookAgents)).toEqual([false, false, true, true]);
    expect(plans.find((p) => p.tier === 'harness')).toEqual({ tier: 'harness', ...TIER_LIMITS.harness });
  });
});

describe('BillingService payment method', () => {
  it('refuses every payment call when no provider is configured (PAYMENT_FAILED), asking nothing', async () => {
    const { provider, service } = billingFixture({ configured: false });
    expect((await refusal(service.setPaymentMethod(USER, 'tok_visa'))).code).toBe('PAYMENT_FAILED');
    expect((await refusal(service.setupIntent(USER))).code).toBe('PAYMENT_FAILED');
    expect((await refusal(service.purchaseCredits(USER, 100))).code).toBe('PAYMENT_FAILED');
    expect(provider.calls).toEqual([]);
  });

  it("creates the user's customer at the provider once and keeps it", async () => {
    const { rows, provider, service } = billingFixture();
    const answer = await service.setPaymentMethod(USER, 'tok_visa');
    expect(answer.paymentMethod).toEqual({ brand: 'visa', last4: '4242' });
    await service.setupIntent(USER);
    expect(provider.calls).toEqual(['ensureCustomer ' + USER, 'attach cus_1', 'setupIntent cus_1']);
    expect(rows.customers.get(USER)?.customerId).toBe('cus_1');
  });
});

describe('BillingService.purchaseCredits', () => {
  it("refuses less than the provider's smallest charge (VALIDATION_ERROR on amount) before any call", async () => {
    const { provider, service } = billingFixture();
    const err = await refusal(service.purchaseCredits(USER, 49));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details).toEqual([{ field: 'amount', message: expect.stringContaining('at least 50') }]);
    expect(provider.calls).toEqual([]);
  });

  it('refuses without a card on file (NO_PAYMENT_METHOD)', async () => {
    const { service } = billingFixture();
    expect((await refusal(service.purchaseCredits(USER, 100))).code).toBe('NO_PAYMENT_METHOD');
  });

  it('grants the credits of a charge that succeeded, once, with a ledger row', async () => {
    const { rows, creditRows, metrics, service } = billingFixture({ balance: 5 });
    rows.users.get(USER)!.paymentMethod = CARD;
    const result = await service.purchaseCredits(USER, 100);
    expect(result.credits).toBe(105);
    expect(result.purchase).toMatchObject({ credits: 100, amountCents: 100, status: 'succeeded' });
    expect(creditRows.ledgerRows).toMatchObject([
      { delta: 100, reason: 'purchase', reference: `purchase:${result.purchase.id}` },
    ]);
    expect(await counted(metrics.creditPurchases, { outcome: 'succeeded' })).toBe(1);
  });

  it('marks a declined purchase failed and grants nothing', async () => {
    const { rows, provider, creditRows, service } = billingFixture({ balance: 5 });
    rows.users.get(USER)!.paymentMethod = CARD;
    provider.nextCharge = 'declined';
    expect((await refusal(service.purchaseCredits(USER, 100))).code).toBe('PAYMENT_FAILED');
    expect([...rows.purchaseRows.values()].map((p) => p.status)).toEqual(['failed']);
    expect(creditRows.balances.get(USER)).toBe(5);
  });

  it('leaves a purchase whose outcome is unknown pending (the event settles it), grants nothing', async () => {
    const { rows, provider, creditRows, metrics, service } = billingFixture();
    rows.users.get(USER)!.paymentMethod = CARD;
    provider.nextCharge = 'unknown';
    expect((await refusal(service.purchaseCredits(USER, 100))).code).toBe('PAYMENT_FAILED');
    expect([...rows.purchaseRows.values()].map((p) => p.status)).toEqual(['pending']);
    expect(creditRows.balances.get(USER)).toBe(0);
    expect(await counted(metrics.creditPurchases, { outcome: 'pending' })).toBe(1);
  });

  it('answers a pending charge with the balance as it was and the purchase pending', async () => {
    const { rows, provider, service } = billingFixture({ balance: 3 });
    rows.users.get(USER)!.paymentMethod = CARD;
    provider.nextCharge = 'pending';
    const result = await service.purchaseCredits(USER, 100);
    expect(result).toMatchObject({ credits: 3, purchase: { status: 'pending' } });
    // The provider's reference is kept, so the event that settles it (or the reconciler) finds it.
    expect([...rows.purchaseRows.values()].map((p) => p.providerRef)).toEqual([expect.stringMatching(/^pi_/)]);
  });
});

describe('BillingService.settlePurchase (grant once)', () => {
  it('grants a purchase once however often it is settled, and not a payment that does not match it', async () => {
    const { rows, creditRows, service } = billingFixture();
    await rows.createPurchase({ id: 'p1', userId: USER, credits: 100, amountCents: 100 });
    await rows.createPurchase({ id: 'p2', userId: USER, credits: 100, amountCents: 100 });
    await expect(service.settlePurchase(rows.tx, 'p1', 'pi_1')).resolves.toBe(true);
    await expect(service.settlePurchase(rows.tx, 'p1', 'pi_1')).resolves.toBe(false);
    await expect(service.settlePurchase(rows.tx, 'p2', 'pi_2', { userId: USER, amountCents: 99 })).resolves.toBe(false);
    await expect(
      service.settlePurchase(rows.tx, 'p2', 'pi_2', { userId: 'someone-else', amountCents: 100 }),
    ).resolves.toBe(false);
    await expect(service.settlePurchase(rows.tx, 'nope', 'pi_3')).resolves.toBe(false);
    expect(creditRows.balances.get(USER)).toBe(100);
    expect(rows.purchaseRows.get('p2')?.status).toBe('pending');
  });

  it('grants a purchase marked failed that the provider reports succeeded after all; a settled one is not failed', async () => {
    const { rows, creditRows, service } = billingFixture();
    await rows.createPurchase({ id: 'p1', userId: USER, credits: 10, amountCents: 10 });
    await service.failPurchase(rows.tx, 'p1', null, 'declined');
    await expect(service.settlePurchase(rows.tx, 'p1', 'pi_1')).resolves.toBe(true);
    await service.failPurchase(rows.tx, 'p1', null, 'late failure');
    expect(rows.purchaseRows.get('p1')?.status).toBe('succeeded');
    expect(creditRows.balances.get(USER)).toBe(10);
  });
});

describe('BillingService.reconcile (purchases whose answer and event went missing)', () => {
  it('settles, fails or keeps each stale pending purchase as the provider answers, and leaves recent ones alone', async () => {
    const { rows, provider, creditRows, service } = billingFixture();
    const now = new Date('2026-03-01T12:00:00Z');
    const at = (msAgo: number): Date => new Date(now.getTime() - msAgo);
    const seed = (id: string, createdAt: Date): void => {
      rows.purchaseRows.set(id, {
        id,
        userId: USER,
        credits: 10,
        amountCents: 10,
        status: 'pending',
        providerRef: null,
        failure: null,
        createdAt,
        settledAt: null,
      });
    };
    seed('paid', at(RECONCILE_AFTER_MS + 1000));
    seed('declined', at(RECONCILE_AFTER_MS + 2000));
    seed('missing-old', at(MISSING_CHARGE_FAILS_AFTER_MS + 1000));
    seed('missing-young', at(RECONCILE_AFTER_MS + 3000));
    seed('recent', at(RECONCILE_AFTER_MS - 1000));
    provider.lookups.set('paid', { status: 'succeeded', ref: 'pi_paid' });
    provider.lookups.set('declined', { status: 'failed', ref: 'pi_d', failure: 'card_declined' });
    await service.reconcile(USER, now);
    const status = (id: string): string | undefined => rows.purchaseRows.get(id)?.status;
    expect([
      status('paid'),
      status('declined'),
      status('missing-old'),
      status('missing-young'),
      status('recent'),
    ]).toEqual(['succeeded', 'failed', 'failed', 'pending', 'pending']);
    expect(provider.calls).not.toContain('lookupCharge recent');
    expect(creditRows.balances.get(USER)).toBe(10);
  });

  it('asks nothing when no provider is configured', async () => {
    const { provider, service } = billingFixture({ configured: false });
    await service.reconcile(USER);
    expect(provider.calls).toEqual([]);
  });
});

describe('BillingService.changeSubscription (plan changes)', () => {
  it('refuses a paid tier without a card (NO_PAYMENT_METHOD) and without a provider (PAYMENT_FAILED)', async () => {
    expect((await refusal(billingFixture().service.changeSubscription(USER, 'pro'))).code).toBe('NO_PAYMENT_METHOD');
    expect((await refusal(billingFixture({ configured: false }).service.changeSubscription(USER, 'pro'))).code).toBe(
      'PAYMENT_FAILED',
    );
  });

  it('moves to free without the provider when there is no subscription', async () => {
    const { rows, provider, service } = billingFixture({ configured: false });
    rows.users.get(USER)!.tier = 'pro';
    await expect(service.changeSubscription(USER, 'free')).resolves.toMatchObject({
      tier: 'free',
      subscriptionStatus: 'active',
    });
    expect(provider.calls).toEqual([]);
  });

  it('subscribes to a paid tier through the provider and records the subscription', async () => {
    const { rows, provider, service } = billingFixture();
    rows.users.get(USER)!.paymentMethod = CARD;
    provider.subscriptionAnswer = { subscriptionId: 'sub_9', status: 'active' };
    await expect(service.changeSubscription(USER, 'harness')).resolves.toMatchObject({ tier: 'harness' });
    expect(rows.customers.get(USER)).toMatchObject({ customerId: 'cus_1', subscriptionId: 'sub_9' });
    expect(provider.subscriptionChanges[0]).toMatchObject({
      tier: 'harness',
      current: null,
      pastDue: false,
      card: CARD,
    });
  });

  it('tells the provider that a past-due subscription asked for again is to be paid now, and ends one for free', async () => {
    const { rows, provider, service } = billingFixture();
    rows.users.get(USER)!.paymentMethod = CARD;
    await service.changeSubscription(USER, 'pro');
    rows.users.get(USER)!.subscriptionStatus = 'past_due';
    await service.changeSubscription(USER, 'pro');
    expect(provider.subscriptionChanges[1]).toMatchObject({ current: 'sub_1', pastDue: true });
    await expect(service.changeSubscription(USER, 'free')).resolves.toMatchObject({ tier: 'free' });
    expect(provider.subscriptionChanges[2]).toMatchObject({ tier: 'free', current: 'sub_1' });
    expect(rows.customers.get(USER)?.subscriptionId).toBeNull();
  });
});
