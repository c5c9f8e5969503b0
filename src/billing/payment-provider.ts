import { randomUUID } from 'node:crypto';
import { AppError } from '../common/app-error.js';
import type { PaidTier, PaymentProviderName } from '../config/settings.js';

export interface CardOnFile {
  brand: string;
  last4: string;
  /** The provider's reference for the stored method (Stripe: `pm_…`). */
  ref: string;
}

/** The user as the provider knows them. */
export interface BillingCustomer {
  userId: string;
  email: string;
  /** The provider's customer id, once there is one (the test provider has none). */
  customerId: string | null;
}

/** A charge's outcome when it was not declined: paid now, or still settling (credits come with the provider's event). */
export interface ChargeResult {
  ref: string;
  outcome: 'succeeded' | 'pending';
}

/** What the provider knows of a purchase's charge when asked later (its answer or its event went missing). */
export type ChargeLookup =
  | { status: 'succeeded'; ref: string }
  | { status: 'failed'; ref: string | null; failure: string }
  | { status: 'pending' }
  /** The provider has no charge for it: the request never reached it. */
  | { status: 'missing' };

/** The subscription after a change: its id at the provider (null when there is none, e.g. on `free`) and its state. */
export interface SubscriptionResult {
  subscriptionId: string | null;
  status: 'active' | 'past_due';
}

/** A subscription change as the service asks it of the provider. */
export interface SubscriptionChange {
  tier: PaidTier | 'free';
  /** The subscription the user has now (null: none). */
  current: string | null;
  /** The user's status now: a past-due subscription asked for again is paid now. */
  pastDue: boolean;
  card: CardOnFile | null;
  /** Tells apart two requests for the same change (part of the idempotency keys). */
  requestId: string;
}

interface EventHead {
  /** The provider's event id (a repeated delivery has the same). */
  id: string;
  type: string;
  /** When the provider created it: orders subscription events (one older than the newest applied changes nothing). */
  created: Date;
}

export interface PaymentSucceededEvent extends EventHead {
  kind: 'payment_succeeded';
  purchaseId: string | null;
  userId: string | null;
  paymentRef: string;
  amountCents: number;
}

export interface PaymentFailedEvent extends EventHead {
  kind: 'payment_failed';
  purchaseId: string | null;
  paymentRef: string;
  failure: string;
}

export interface InvoiceEvent extends EventHead {
  kind: 'invoice_paid' | 'invoice_failed';
  customerId: string;
  subscriptionId: string | null;
}

export interface SubscriptionChangedEvent extends EventHead {
  kind: 'subscription_changed';
  customerId: string;
  subscriptionId: string;
  /** active, past_due, or ended (canceled, deleted, or never paid). */
  status: 'active' | 'past_due' | 'ended';
  /** The tier its price sells; null when the price is none of the configured ones. */
  tier: PaidTier | null;
}

export interface IgnoredEvent extends EventHead {
  kind: 'ignored';
}

/** What the provider's webhook said, in the service's terms. */
export type BillingEvent =
  PaymentSucceededEvent | PaymentFailedEvent | InvoiceEvent | SubscriptionChangedEvent | IgnoredEvent;

export interface PaymentProvider {
  readonly name: PaymentProviderName;
  /** False when the server takes no payments (PAYMENT_PROVIDER=none): every payment is refused up front. */
  readonly configured: boolean;
  /** For the console's card field (Stripe's publishable key); null: the console takes a token. */
  readonly publishableKey: string | null;
  /** The smallest charge the provider takes, in cents. */
  readonly minimumChargeCents: number;
  /** The customer id to keep for the user (created at the provider when there is none yet); null when the provider has none. */
  ensureCustomer(customer: BillingCustomer): Promise<string | null>;
  /** Turns a token from the client into the customer's stored (default) payment method (VALIDATION_ERROR if unknown). */
  attach(customer: BillingCustomer, token: string, requestId: string): Promise<CardOnFile>;
  /** A client secret for a SetupIntent (the console's card field confirms it, then attaches its `pm_…`). */
  setupIntent(customer: BillingCustomer, requestId: string): Promise<{ clientSecret: string }>;
  /** Charges a credit purchase (keyed by its id); PAYMENT_FAILED when declined. */
  chargeCredits(
    customer: BillingCustomer,
    card: CardOnFile,
    purchase: { id: string; amountCents: number; credits: number },
  ): Promise<ChargeResult>;
  /** Looks up a purchase's charge: by its reference when known, else by the purchase id it carries. */
  lookupCharge(purchase: { id: string; providerRef: string | null }): Promise<ChargeLookup>;
  /** Creates, changes, pays again or ends the tier's subscription; PAYMENT_FAILED when declined. */
  changeSubscription(customer: BillingCustomer, change: SubscriptionChange): Promise<SubscriptionResult>;
  /** Verifies a webhook delivery's signature and reads it (WEBHOOK_SECRET_INVALID when forged). */
  readEvent(rawBody: Buffer, signature: string | undefined): Promise<BillingEvent>;
}

export const PAYMENT_PROVIDER = Symbol('PAYMENT_PROVIDER');

/**
 * PAYMENT_FAILED for a charge whose outcome is unknown (the provider did not answer): the purchase
 * stays pending, and the provider's event settles it either way.
 */
export class PaymentOutcomeUnknown extends AppError {
  constructor(message: string) {
    super('PAYMENT_FAILED', message);
  }
}

/** The one answer of a server without a payment provider (see NoPaymentProvider). */
export function paymentsNotConfigured(): AppError {
  return new AppError('PAYMENT_FAILED', 'payments are not configured on this server');
}

function noWebhooks(name: string): AppError {
  return new AppError('NOT_FOUND', `This server takes no payment provider events (PAYMENT_PROVIDER=${name})`);
}

/**
 * PAYMENT_PROVIDER=none (the default): nothing can be attached or charged, so no credit or tier is
 * ever granted by a payment. PAYMENT_FAILED (402) rather than NO_PAYMENT_METHOD: the client did
 * nothing wrong and adding a card would not help; the payment itself is impossible here.
 */
export class NoPaymentProvider implements PaymentProvider {
  readonly name = 'none' as const;
  readonly configured = false;
  readonly publishableKey = null;
  readonly minimumChargeCents = 1;

  async ensureCustomer(): Promise<string | null> {
    throw paymentsNotConfigured();
  }

  async attach(): Promise<CardOnFile> {
    throw paymentsNotConfigured();
  }

  async setupIntent(): Promise<{ clientSecret: string }> {
    throw paymentsNotConfigured();
  }

  async chargeCredits(): Promise<ChargeResult> {
    throw paymentsNotConfigured();
  }

  async changeSubscription(): Promise<SubscriptionResult> {
    throw paymentsNotConfigured();
  }

  async lookupCharge(): Promise<ChargeLookup> {
    return { status: 'missing' };
  }

  async readEvent(): Promise<BillingEvent> {
    throw noWebhooks('none');
  }
}

/** Test cards, as a card processor's test mode has them. */
const TEST_CARDS: Record<string, { brand: string; last4: string; declines: boolean }> = {
  tok_visa: { brand: 'visa', last4: '4242', declines: false },
  tok_mastercard: { brand: 'mastercard', last4: '4444', declines: false },
  tok_amex: { brand: 'amex', last4: '8431', declines: false },
  tok_chargeDeclined: { brand: 'visa', last4: '0002', declines: true },
};

/**
 * PAYMENT_PROVIDER=test (only with ALLOW_TEST_PAYMENTS=true): local, no network, deterministic. `tok_visa` attaches and charges;
 * `tok_chargeDeclined` attaches, then every charge is declined. It keeps no customers and no
 * subscriptions: a paid tier is charged its price once, when it is chosen.
 */
export class TestPaymentProvider implements PaymentProvider {
  readonly name = 'test' as const;
  readonly configured = true;
  readonly publishableKey = null;
  readonly minimumChargeCents = 1;

  constructor(private readonly tierPriceCents: (tier: PaidTier) => number) {}

  async ensureCustomer(): Promise<string | null> {
    return null;
  }

  async attach(_customer: BillingCustomer, token: string): Promise<CardOnFile> {
    const card = TEST_CARDS[token];
    if (card === undefined) {
      throw AppError.validation([
        {
          field: 'paymentMethodToken',
          message: `unknown token; test tokens are ${Object.keys(TEST_CARDS).join(', ')}`,
        },
      ]);
    }
    return { brand: card.brand, last4: card.last4, ref: `pm_test_${token}_${randomUUID().slice(0, 8)}` };
  }

  async setupIntent(): Promise<{ clientSecret: string }> {
    throw new AppError(
      'PAYMENT_FAILED',
      'The test provider takes test card tokens directly (POST /api/billing/payment-method): it has no SetupIntents',
    );
  }

  async chargeCredits(
    _customer: BillingCustomer,
    card: CardOnFile,
    purchase: { amountCents: number; credits: number },
  ): Promise<ChargeResult> {
    return { ref: this.charge(card, purchase.amountCents, `${purchase.credits} credits`), outcome: 'succeeded' };
  }

  async changeSubscription(_customer: BillingCustomer, change: SubscriptionChange): Promise<SubscriptionResult> {
    if (change.tier !== 'free') {
      if (change.card === null) {
        throw new AppError('NO_PAYMENT_METHOD', 'Add a payment method first: POST /api/billing/payment-method');
      }
      this.charge(change.card, this.tierPriceCents(change.tier), `${change.tier} subscription`);
    }
    return { subscriptionId: null, status: 'active' };
  }

  /** The test provider answers every charge at once and keeps nothing: a purchase left pending was never charged. */
  async lookupCharge(): Promise<ChargeLookup> {
    return { status: 'missing' };
  }

  async readEvent(): Promise<BillingEvent> {
    throw noWebhooks('test');
  }

  private charge(method: CardOnFile, amountCents: number, description: string): string {
    const token = /^pm_test_(tok_[A-Za-z]+)_/.exec(method.ref)?.[1];
    const card = token === undefined ? undefined : TEST_CARDS[token];
    if (card === undefined || card.declines) {
      throw new AppError('PAYMENT_FAILED', `The card ending ${method.last4} was declined (${description})`);
    }
    if (!Number.isInteger(amountCents) || amountCents <= 0) {
      throw new AppError('PAYMENT_FAILED', 'Invalid charge amount');
    }
    return `ch_test_${randomUUID()}`;
  }
}
