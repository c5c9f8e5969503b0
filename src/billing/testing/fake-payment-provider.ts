import { AppError } from '../../common/app-error.js';
import {
  type BillingCustomer,
  type BillingEvent,
  type CardOnFile,
  type ChargeLookup,
  type ChargeResult,
  PaymentOutcomeUnknown,
  type PaymentProvider,
  type SubscriptionChange,
  type SubscriptionResult,
} from '../payment-provider.js';

/** The signature the fake accepts on an event (anything else: WEBHOOK_SECRET_INVALID, as Stripe's check). */
export const FAKE_SIGNATURE = 'fake-signature';

/** How the fake answers the next charge. */
export type FakeChargeOutcome = 'succeeded' | 'pending' | 'declined' | 'unknown';

/**
 * A payment provider for unit specs: scripted answers, every call recorded, no network. Events are
 * the JSON of a BillingEvent (dates as ISO strings) under FAKE_SIGNATURE.
 */
export class FakePaymentProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  readonly publishableKey = 'pk_fake';
  minimumChargeCents = 50;
  nextCharge: FakeChargeOutcome = 'succeeded';
  /** What lookupCharge answers, by purchase id (default: missing). */
  readonly lookups = new Map<string, ChargeLookup>();
  subscriptionAnswer: SubscriptionResult = { subscriptionId: 'sub_1', status: 'active' };
  readonly calls: string[] = [];
  readonly subscriptionChanges: SubscriptionChange[] = [];
  private customers = 0;

  constructor(readonly configured = true) {}

  async ensureCustomer(customer: BillingCustomer): Promise<string | null> {
    this.calls.push(`ensureCustomer ${customer.userId}`);
    this.customers += 1;
    return `cus_${this.customers}`;
  }

  async attach(customer: BillingCustomer, token: string): Promise<CardOnFile> {
    this.calls.push(`attach ${customer.customerId}`);
    if (token !== 'tok_visa') {
      throw new AppError('PAYMENT_FAILED', 'The card was declined');
    }
    return { brand: 'visa', last4: '4242', ref: 'pm_1' };
  }

  async setupIntent(customer: BillingCustomer): Promise<{ clientSecret: string }> {
    this.calls.push(`setupIntent ${customer.customerId}`);
    return { clientSecret: 'seti_secret' };
  }

  async chargeCredits(
    customer: BillingCustomer,
    _card: CardOnFile,
    purchase: { id: string; amountCents: number; credits: number },
  ): Promise<ChargeResult> {
    this.calls.push(`chargeCredits ${customer.customerId} ${purchase.amountCents}`);
    switch (this.nextCharge) {
      case 'declined':
        throw new AppError('PAYMENT_FAILED', 'The card ending 4242 was declined (card_declined)');
      case 'unknown':
        throw new PaymentOutcomeUnknown('Stripe did not answer: the payment may still go through');
      default:
        return { ref: `pi_${purchase.id.slice(0, 8)}`, outcome: this.nextCharge };
    }
  }

  async lookupCharge(purchase: { id: string }): Promise<ChargeLookup> {
    this.calls.push(`lookupCharge ${purchase.id}`);
    const found = this.lookups.get(purchase.id);
    if (found === undefined) {
      return { status: 'missing' };
    }
    return found;
  }

  async changeSubscription(customer: BillingCustomer, change: SubscriptionChange): Promise<SubscriptionResult> {
    this.calls.push(`changeSubscription ${customer.customerId} ${change.tier}`);
    this.subscriptionChanges.push(change);
    return change.tier === 'free' ? { subscriptionId: null, status: 'active' } : this.subscriptionAnswer;
  }

  async readEvent(rawBody: Buffer, signature: string | undefined): Promise<BillingEvent> {
    if (signature !== FAKE_SIGNATURE) {
      throw new AppError('WEBHOOK_SECRET_INVALID', 'The signature does not match');
    }
    const event = JSON.parse(rawBody.toString('utf8')) as BillingEvent & { created: string };
    return { ...event, created: new Date(event.created) };
  }
}

/** A signed event body as the provider would post it. */
export function eventBody(event: BillingEvent): Buffer {
  return Buffer.from(JSON.stringify(event));
}
