import { describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { AppError } from '../common/app-error.js';
import type { StripeSettings } from '../config/settings.js';
import { PaymentOutcomeUnknown } from './payment-provider.js';
import { STRIPE_METADATA } from './stripe-client.js';
import { readStripeEvent } from './stripe-events.js';
import { StripePaymentProvider } from './stripe-payment-provider.js';

const SETTINGS: StripeSettings = {
  secretKey: 'sk_test_unit',
  webhookSecret: 'whsec_unit_secret',
  publishableKey: undefined,
  apiBase: 'http://127.0.0.1:9',
  prices: { pro: 'price_pro', harness: 'price_harness', team: 'price_team' },
};

const CUSTOMER = { userId: 'u1', email: 'a@example.com', customerId: 'cus_1' };
const CARD = { brand: 'visa', last4: '4242', ref: 'pm_1' };
const PURCHASE = { id: '0b9a3f5e-4a40-4f7e-9d7e-3f1c2b1a0d11', amountCents: 500, credits: 500 };

function event(type: string, object: Record<string, unknown>, created = 1_800_000_000): Stripe.Event {
  return { id: `evt_${type}`, object: 'event', type, created, data: { object } } as unknown as Stripe.Event;
}

/** A provider whose Stripe client answers PaymentIntent creation with `create`. */
function providerCharging(create: () => Promise<unknown>): StripePaymentProvider {
  const fake = { paymentIntents: { create } } as unknown as Stripe;
  return new StripePaymentProvider(SETTINGS, fake);
}

async function failure(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a failure');
}

describe('Stripe events, read', () => {
  it('a PaymentIntent that succeeded leads back to its purchase and user', () => {
    const read = readStripeEvent(
      event('payment_intent.succeeded', {
        id: 'pi_1',
        amount: 500,
        amount_received: 500,
        metadata: { [STRIPE_METADATA.purchaseId]: PURCHASE.id, [STRIPE_METADATA.userId]: 'u1' },
      }),
      SETTINGS.prices,
    );
    expect(read).toMatchObject({
      kind: 'payment_succeeded',
      purchaseId: PURCHASE.id,
      userId: 'u1',
      paymentRef: 'pi_1',
      amountCents: 500,
      created: new Date(1_800_000_000_000),
    });
  });

  it("an invoice's subscription is read where this API version puts it and where older ones did", () => {
    const now = readStripeEvent(
      event('invoice.payment_failed', {
        customer: 'cus_1',
        parent: { subscription_details: { subscription: 'sub_new' } },
      }),
      SETTINGS.prices,
    );
    expect(now).toMatchObject({ kind: 'invoice_failed', customerId: 'cus_1', subscriptionId: 'sub_new' });
    const older = readStripeEvent(
      event('invoice.paid', { customer: { id: 'cus_2' }, subscription: 'sub_old' }),
      SETTINGS.prices,
    );
    expect(older).toMatchObject({ kind: 'invoice_paid', customerId: 'cus_2', subscriptionId: 'sub_old' });
  });

  it("a subscription's price names its tier; deleted is ended whatever its status; unknown types are ignored", () => {
    const updated = readStripeEvent(
      event('customer.subscription.updated', {
        id: 'sub_1',
        customer: 'cus_1',
        status: 'past_due',
        items: { data: [{ price: { id: 'price_harness' } }] },
      }),
      SETTINGS.prices,
    );
    expect(updated).toMatchObject({ kind: 'subscription_changed', status: 'past_due', tier: 'harness' });
    const deleted = readStripeEvent(
      event('customer.subscription.deleted', {
        id: 'sub_1',
        customer: 'cus_1',
        status: 'active',
        items: { data: [{ price: { id: 'price_other' } }] },
      }),
      SETTINGS.prices,
    );
    expect(deleted).toMatchObject({ kind: 'subscription_changed', status: 'ended', tier: null });
    expect(readStripeEvent(event('charge.refunded', { id: 'ch_1' }), SETTINGS.prices).kind).toBe('ignored');
  });

  it('an invoice without a customer is WEBHOOK_PAYLOAD_INVALID', () => {
    expect(() => readStripeEvent(event('invoice.paid', { customer: null }), SETTINGS.prices)).toThrow(
      expect.objectContaining({ code: 'WEBHOOK_PAYLOAD_INVALID' }),
    );
  });
});

describe('Stripe webhook signatures', () => {
  const provider = new StripePaymentProvider(SETTINGS);
  const payload = JSON.stringify(event('charge.refunded', { id: 'ch_1' }));

  it('a delivery signed with the endpoint secret is read', async () => {
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SETTINGS.webhookSecret });
    await expect(provider.readEvent(Buffer.from(payload), signature)).resolves.toMatchObject({
      id: 'evt_charge.refunded',
      kind: 'ignored',
    });
  });

  it('a forged, altered, replayed or unsigned delivery is WEBHOOK_SECRET_INVALID', async () => {
    const forged = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_someone_else' });
    const good = Stripe.webhooks.generateTestHeaderString({ payload, secret: SETTINGS.webhookSecret });
    const old = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: SETTINGS.webhookSecret,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    const altered = Buffer.from(payload.replace('ch_1', 'ch_2'));
    for (const [body, signature] of [
      [Buffer.from(payload), forged],
      [altered, good],
      [Buffer.from(payload), old],
      [Buffer.from(payload), undefined],
    ] as const) {
      expect((await failure(provider.readEvent(body, signature))).code).toBe('WEBHOOK_SECRET_INVALID');
    }
  });
});

describe('Stripe charges', () => {
  it('a declined card is PAYMENT_FAILED with the decline code, and known to have charged nothing', async () => {
    const declined = providerCharging(() =>
      Promise.reject(
        new Stripe.errors.StripeCardError({
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'insufficient_funds',
          message: 'Your card has insufficient funds.',
        }),
      ),
    );
    const error = await failure(declined.chargeCredits(CUSTOMER, CARD, PURCHASE));
    expect(error).toBeInstanceOf(AppError);
    expect(error).not.toBeInstanceOf(PaymentOutcomeUnknown);
    expect(error.code).toBe('PAYMENT_FAILED');
    expect(error.message).toContain('insufficient_funds');
  });

  it('no answer from Stripe is PAYMENT_FAILED with an unknown outcome (the purchase stays pending)', async () => {
    const unreachable = providerCharging(() =>
      Promise.reject(new Stripe.errors.StripeConnectionError({ message: 'ECONNRESET' })),
    );
    const error = await failure(unreachable.chargeCredits(CUSTOMER, CARD, PURCHASE));
    expect(error).toBeInstanceOf(PaymentOutcomeUnknown);
    expect(error.message).toContain('when Stripe confirms it');
  });

  it('a request Stripe refused charged nothing: PAYMENT_FAILED, the purchase known to be failed', async () => {
    const staleCard = providerCharging(() =>
      Promise.reject(
        new Stripe.errors.StripeInvalidRequestError({
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'payment_method',
          message: "No such PaymentMethod: 'pm_test_tok_visa_1'",
        }),
      ),
    );
    const error = await failure(staleCard.chargeCredits(CUSTOMER, CARD, PURCHASE));
    expect(error).not.toBeInstanceOf(PaymentOutcomeUnknown);
    expect(error.message).toContain('add the card again');
    const limited = providerCharging(() =>
      Promise.reject(
        new Stripe.errors.StripeRateLimitError({ type: 'rate_limit_error', message: 'Too many requests' }),
      ),
    );
    expect(await failure(limited.chargeCredits(CUSTOMER, CARD, PURCHASE))).not.toBeInstanceOf(PaymentOutcomeUnknown);
    const stripeDown = providerCharging(() =>
      Promise.reject(new Stripe.errors.StripeAPIError({ type: 'api_error', message: 'An unknown error occurred' })),
    );
    expect(await failure(stripeDown.chargeCredits(CUSTOMER, CARD, PURCHASE))).toBeInstanceOf(PaymentOutcomeUnknown);
  });

  it("maps the PaymentIntent's status: succeeded, processing is pending, anything else declined", async () => {
    const answering = (status: string) => providerCharging(() => Promise.resolve({ id: 'pi_9', status }));
    await expect(answering('succeeded').chargeCredits(CUSTOMER, CARD, PURCHASE)).resolves.toEqual({
      ref: 'pi_9',
      outcome: 'succeeded',
    });
    await expect(answering('processing').chargeCredits(CUSTOMER, CARD, PURCHASE)).resolves.toEqual({
      ref: 'pi_9',
      outcome: 'pending',
    });
    for (const status of ['requires_payment_method', 'requires_action', 'canceled']) {
      expect((await failure(answering(status).chargeCredits(CUSTOMER, CARD, PURCHASE))).code).toBe('PAYMENT_FAILED');
    }
  });

  it('sends the purchase as metadata with an idempotency key of the purchase', async () => {
    const calls: unknown[][] = [];
    const provider = providerCharging((...args: unknown[]) => {
      calls.push(args);
      return Promise.resolve({ id: 'pi_9', status: 'succeeded' });
    });
    await provider.chargeCredits(CUSTOMER, CARD, PURCHASE);
    expect(calls[0]).toEqual([
      expect.objectContaining({
        amount: 500,
        customer: 'cus_1',
        payment_method: 'pm_1',
        confirm: true,
        off_session: true,
        metadata: { [STRIPE_METADATA.userId]: 'u1', [STRIPE_METADATA.purchaseId]: PURCHASE.id },
      }),
      { idempotencyKey: `agentsite-purchase-${PURCHASE.id}` },
    ]);
  });
});
