import { describe, expect, it } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import { counted } from '../runs/testing/fixtures.js';
import type { BillingEvent } from './payment-provider.js';
import { billingFixture, USER } from './testing/billing-fixture.js';
import { eventBody, FAKE_SIGNATURE } from './testing/fake-payment-provider.js';

const PURCHASE = '9d6b0f3a-1111-4111-8111-000000000001';
const T0 = new Date('2026-03-01T12:00:00Z');

function paid(id: string, amountCents = 100, purchaseId: string | null = PURCHASE): BillingEvent {
  return {
    id,
    type: 'payment_intent.succeeded',
    created: T0,
    kind: 'payment_succeeded',
    purchaseId,
    userId: USER,
    paymentRef: 'pi_1',
    amountCents,
  };
}

function withPurchase() {
  const fixture = billingFixture();
  fixture.rows.purchaseRows.set(PURCHASE, {
    id: PURCHASE,
    userId: USER,
    credits: 100,
    amountCents: 100,
    status: 'pending',
    providerRef: null,
    failure: null,
    createdAt: T0,
    settledAt: null,
  });
  return fixture;
}

/** A user with a customer and a subscription whose last applied event is `at`. */
function subscribed(at: Date | null = T0) {
  const fixture = billingFixture();
  fixture.rows.users.get(USER)!.tier = 'pro';
  fixture.rows.customers.set(USER, {
    userId: USER,
    customerId: 'cus_1',
    subscriptionId: 'sub_1',
    subscriptionTier: 'pro',
    subscriptionStatus: 'active',
    statusEventAt: at,
    updatedAt: T0,
  });
  return fixture;
}

function later(ms: number): Date {
  return new Date(T0.getTime() + ms);
}

describe('BillingEventsService.receive', () => {
  it('refuses an event whose signature does not verify (WEBHOOK_SECRET_INVALID), applying nothing', async () => {
    const { rows, metrics, events } = withPurchase();
    const err = await events.receive(eventBody(paid('evt_1')), 'forged').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('WEBHOOK_SECRET_INVALID');
    expect(rows.events.size).toBe(0);
    expect(await counted(metrics.paymentEvents, { outcome: 'refused', code: 'WEBHOOK_SECRET_INVALID' })).toBe(1);
  });

  it('applies an event once: a repeated delivery answers duplicate and grants nothing more', async () => {
    const { creditRows, metrics, events } = withPurchase();
    await expect(events.receive(eventBody(paid('evt_1')), FAKE_SIGNATURE)).resolves.toEqual({
      received: true,
      duplicate: false,
    });
    await expect(events.receive(eventBody(paid('evt_1')), FAKE_SIGNATURE)).resolves.toEqual({
      received: true,
      duplicate: true,
    });
    expect(creditRows.balances.get(USER)).toBe(100);
    expect(await counted(metrics.paymentEvents, { outcome: 'duplicate' })).toBe(1);
  });

  it('grants a purchase once even when two different events report its payment', async () => {
    const { creditRows, events } = withPurchase();
    await events.receive(eventBody(paid('evt_1')), FAKE_SIGNATURE);
    await events.receive(eventBody(paid('evt_2')), FAKE_SIGNATURE);
    expect(creditRows.balances.get(USER)).toBe(100);
  });

  it('does not record an event that failed to apply, so the provider’s retry applies it', async () => {
    const { creditRows, rows, events } = withPurchase();
    creditRows.balances.delete(USER);
    await expect(events.receive(eventBody(paid('evt_1')), FAKE_SIGNATURE)).rejects.toThrow();
    expect(rows.events.has('evt_1')).toBe(false);
    expect(rows.purchaseRows.get(PURCHASE)?.status).toBe('pending');
    creditRows.balances.set(USER, 0);
    await expect(events.receive(eventBody(paid('evt_1')), FAKE_SIGNATURE)).resolves.toMatchObject({ duplicate: false });
    expect(creditRows.balances.get(USER)).toBe(100);
  });

  it('grants nothing for a payment of another amount, or a purchase id that is not ours', async () => {
    const { creditRows, rows, events } = withPurchase();
    await events.receive(eventBody(paid('evt_1', 99)), FAKE_SIGNATURE);
    await events.receive(eventBody(paid('evt_2', 100, 'not-a-uuid')), FAKE_SIGNATURE);
    expect(creditRows.balances.get(USER)).toBe(0);
    expect(rows.purchaseRows.get(PURCHASE)?.status).toBe('pending');
  });

  it('marks the purchase of a failed payment failed with the decline', async () => {
    const { rows, events } = withPurchase();
    const failed: BillingEvent = {
      id: 'evt_f',
      type: 'payment_intent.payment_failed',
      created: T0,
      kind: 'payment_failed',
      purchaseId: PURCHASE,
      paymentRef: 'pi_1',
      failure: 'card_declined',
    };
    await events.receive(eventBody(failed), FAKE_SIGNATURE);
    expect(rows.purchaseRows.get(PURCHASE)).toMatchObject({ status: 'failed', failure: 'declined (card_declined)' });
  });

  it('counts an event type it does not read as other', async () => {
    const { metrics, events } = billingFixture();
    await events.receive(
      eventBody({ id: 'evt_x', type: 'charge.refunded', created: T0, kind: 'ignored' }),
      FAKE_SIGNATURE,
    );
    expect(await counted(metrics.paymentEvents, { type: 'other', outcome: 'applied' })).toBe(1);
  });
});

describe('BillingEventsService subscription events (late and out of order)', () => {
  it('moves the plan to past_due on a failed invoice and back on a paid one', async () => {
    const { rows, events } = subscribed();
    const invoice = (id: string, kind: 'invoice_paid' | 'invoice_failed', ms: number): BillingEvent => ({
      id,
      type: `invoice.${kind}`,
      created: later(ms),
      kind,
      customerId: 'cus_1',
      subscriptionId: 'sub_1',
    });
    await events.receive(eventBody(invoice('evt_1', 'invoice_failed', 1000)), FAKE_SIGNATURE);
    expect(rows.users.get(USER)).toMatchObject({ tier: 'pro', subscriptionStatus: 'past_due' });
    await events.receive(eventBody(invoice('evt_2', 'invoice_paid', 2000)), FAKE_SIGNATURE);
    expect(rows.users.get(USER)).toMatchObject({ tier: 'pro', subscriptionStatus: 'active' });
  });

  it('ignores an event older than the newest state applied', async () => {
    const { rows, events } = subscribed(later(5000));
    const stale: BillingEvent = {
      id: 'evt_old',
      type: 'invoice.payment_failed',
      created: later(1000),
      kind: 'invoice_failed',
      customerId: 'cus_1',
      subscriptionId: 'sub_1',
    };
    await events.receive(eventBody(stale), FAKE_SIGNATURE);
    expect(rows.users.get(USER)?.subscriptionStatus).toBe('active');
  });

  it('ignores an event of a subscription that does not sell the tier now, and of an unknown customer', async () => {
    const { rows, events } = subscribed();
    const other: BillingEvent = {
      id: 'evt_1',
      type: 'invoice.payment_failed',
      created: later(1000),
      kind: 'invoice_failed',
      customerId: 'cus_1',
      subscriptionId: 'sub_old',
    };
    const stranger: BillingEvent = { ...other, id: 'evt_2', customerId: 'cus_unknown', subscriptionId: 'sub_1' };
    await events.receive(eventBody(other), FAKE_SIGNATURE);
    await events.receive(eventBody(stranger), FAKE_SIGNATURE);
    expect(rows.users.get(USER)?.subscriptionStatus).toBe('active');
  });

  it('moves to the free tier when the subscription ended at the provider', async () => {
    const { rows, events } = subscribed();
    const ended: BillingEvent = {
      id: 'evt_1',
      type: 'customer.subscription.deleted',
      created: later(1000),
      kind: 'subscription_changed',
      customerId: 'cus_1',
      subscriptionId: 'sub_1',
      status: 'ended',
      tier: null,
    };
    await events.receive(eventBody(ended), FAKE_SIGNATURE);
    expect(rows.users.get(USER)).toMatchObject({ tier: 'free', subscriptionStatus: 'canceled' });
    expect(rows.customers.get(USER)?.subscriptionId).toBeNull();
  });

  it('adopts an active subscription the API started but could not record, so a paid tier is not lost', async () => {
    const { rows, events } = subscribed(null);
    rows.customers.get(USER)!.subscriptionId = null;
    rows.users.get(USER)!.tier = 'free';
    const adopted: BillingEvent = {
      id: 'evt_1',
      type: 'customer.subscription.created',
      created: later(1000),
      kind: 'subscription_changed',
      customerId: 'cus_1',
      subscriptionId: 'sub_new',
      status: 'active',
      tier: 'team',
    };
    await events.receive(eventBody(adopted), FAKE_SIGNATURE);
    expect(rows.users.get(USER)).toMatchObject({ tier: 'team', subscriptionStatus: 'active' });
    expect(rows.customers.get(USER)?.subscriptionId).toBe('sub_new');
  });
});
