import { Logger } from '@nestjs/common';
import Stripe from 'stripe';
import { AppError } from '../common/app-error.js';
import { type StripeSettings } from '../config/settings.js';
import type {
  BillingCustomer,
  BillingEvent,
  CardOnFile,
  ChargeLookup,
  ChargeResult,
  PaymentProvider,
  SubscriptionChange,
  SubscriptionResult,
} from './payment-provider.js';
import { STRIPE_METADATA, stripeClient, stripeFailure } from './stripe-client.js';
import { readStripeEvent, subscriptionStatus } from './stripe-events.js';

/** How old a signed webhook delivery may be (seconds): Stripe's own default, against replays. */
const SIGNATURE_TOLERANCE_SECONDS = 300;
/** Stripe's smallest charge in USD: $0.50. */
const STRIPE_MINIMUM_CHARGE_CENTS = 50;
/** A payment method the client may hand over: a PaymentMethod (Stripe.js, a SetupIntent) or a legacy card token. */
const CLIENT_TOKEN = /^(pm|tok)_[A-Za-z0-9_]{1,190}$/;

/**
 * PAYMENT_PROVIDER=stripe. Customers, their default card (from a client token or a SetupIntent), a
 * PaymentIntent per credit purchase, one subscription per paid tier, and the webhook events, with the
 * official SDK. Every write carries an idempotency key derived from what it is for (the purchase,
 * the user and the request), so a retry, the SDK's or ours, never charges twice.
 */
export class StripePaymentProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  readonly configured = true;
  readonly minimumChargeCents = STRIPE_MINIMUM_CHARGE_CENTS;
  readonly publishableKey: string | null;
  private readonly logger = new Logger('StripePaymentProvider');

  constructor(
    private readonly settings: StripeSettings,
    private readonly stripe: Stripe = stripeClient(settings),
  ) {
    this.publishableKey = settings.publishableKey ?? null;
  }

  async ensureCustomer(customer: BillingCustomer): Promise<string> {
    if (customer.customerId !== null) {
      return customer.customerId;
    }
    const created = await this.call('create the customer', () =>
      this.stripe.customers.create(
        { email: customer.email, metadata: { [STRIPE_METADATA.userId]: customer.userId } },
        // One customer per user, even when two first attaches race (Stripe keeps keys for 24 hours;
        // the service stores the id at once).
        { idempotencyKey: `agentsite-customer-${customer.userId}` },
      ),
    );
    return created.id;
  }

  async attach(customer: BillingCustomer, token: string, requestId: string): Promise<CardOnFile> {
    if (!CLIENT_TOKEN.test(token)) {
      throw AppError.validation([
        { field: 'paymentMethodToken', message: 'must be a Stripe PaymentMethod id (pm_…) or card token (tok_…)' },
      ]);
    }
    const customerId = this.customerIdOf(customer);
    const unknownToken = (err: unknown): AppError | undefined =>
      err instanceof Stripe.errors.StripeInvalidRequestError
        ? AppError.validation([{ field: 'paymentMethodToken', message: `Stripe refused it: ${err.message}` }])
        : undefined;
    let paymentMethodId = token;
    if (token.startsWith('tok_')) {
      const created = await this.call(
        'turn the card token into a payment method',
        () =>
          this.stripe.paymentMethods.create(
            { type: 'card', card: { token } },
            { idempotencyKey: `agentsite-pm-${customer.userId}-${token}` },
          ),
        unknownToken,
      );
      paymentMethodId = created.id;
    }
    const attached = await this.call(
      'attach the payment method',
      () =>
        this.stripe.paymentMethods.attach(
          paymentMethodId,
          { customer: customerId },
          { idempotencyKey: `agentsite-attach-${customerId}-${paymentMethodId}` },
        ),
      unknownToken,
    );
    await this.call('make it the default payment method', () =>
      this.stripe.customers.update(
        customerId,
        { invoice_settings: { default_payment_method: attached.id } },
        { idempotencyKey: `agentsite-default-pm-${requestId}` },
      ),
    );
    return { brand: attached.card?.brand ?? 'card', last4: attached.card?.last4 ?? '????', ref: attached.id };
  }

  async setupIntent(customer: BillingCustomer, requestId: string): Promise<{ clientSecret: string }> {
    const intent = await this.call('create the SetupIntent', () =>
      this.stripe.setupIntents.create(
        {
          customer: this.customerIdOf(customer),
          usage: 'off_session',
          metadata: { [STRIPE_METADATA.userId]: customer.userId },
        },
        { idempotencyKey: `agentsite-setup-${requestId}` },
      ),
    );
    if (intent.client_secret === null) {
      throw new AppError('PAYMENT_FAILED', 'Stripe created the SetupIntent without a client secret');
    }
    return { clientSecret: intent.client_secret };
  }

  async chargeCredits(
    customer: BillingCustomer,
    card: CardOnFile,
    purchase: { id: string; amountCents: number; credits: number },
  ): Promise<ChargeResult> {
    const intent = await this.call(
      'charge the card',
      () =>
        this.stripe.paymentIntents.create(
          {
            amount: purchase.amountCents,
            currency: 'usd',
            customer: this.customerIdOf(customer),
            payment_method: card.ref,
            confirm: true,
            off_session: true,
            description: `${purchase.credits} agentsite credits`,
            metadata: {
              [STRIPE_METADATA.userId]: customer.userId,
              [STRIPE_METADATA.purchaseId]: purchase.id,
            },
          },
          { idempotencyKey: `agentsite-purchase-${purchase.id}` },
        ),
      undefined,
      // Whether a charge that got no answer went through is unknown: its credits come with the
      // payment_intent.succeeded event, so the message says so.
      'if the charge went through, the credits are added when Stripe confirms it',
    );
    switch (intent.status) {
      case 'succeeded':
        return { ref: intent.id, outcome: 'succeeded' };
      case 'processing':
        return { ref: intent.id, outcome: 'pending' };
      case 'requires_action':
        throw new AppError(
          'PAYMENT_FAILED',
          `The card ending ${card.last4} needs the cardholder's authentication, which a saved card cannot do: add the card again`,
        );
      default:
        // requires_payment_method (declined without an error), canceled, …: nothing was taken.
        throw new AppError('PAYMENT_FAILED', `The card ending ${card.last4} was declined (${intent.status})`);
    }
  }

  async lookupCharge(purchase: { id: string; providerRef: string | null }): Promise<ChargeLookup> {
    let intent: Stripe.PaymentIntent | undefined;
    if (purchase.providerRef !== null) {
      intent = await this.call('read the payment', () => this.stripe.paymentIntents.retrieve(purchase.providerRef!));
    } else {
      // The charge's answer never came back: find it by the purchase id it carries (Stripe's search
      // lags writes by about a minute, so only purchases older than that are looked up).
      const found = await this.call('search the payments', () =>
        this.stripe.paymentIntents.search({
          query: `metadata['${STRIPE_METADATA.purchaseId}']:'${purchase.id}'`,
          limit: 10,
        }),
      );
      intent = found.data.find((pi) => pi.metadata?.[STRIPE_METADATA.purchaseId] === purchase.id);
    }
    if (intent === undefined) {
      return { status: 'missing' };
    }
    switch (intent.status) {
      case 'succeeded':
        return { status: 'succeeded', ref: intent.id };
      case 'processing':
        return { status: 'pending' };
      default:
        return {
          status: 'failed',
          ref: intent.id,
          failure: `declined (${intent.last_payment_error?.decline_code ?? intent.last_payment_error?.code ?? intent.status})`,
        };
    }
  }

  async changeSubscription(customer: BillingCustomer, change: SubscriptionChange): Promise<SubscriptionResult> {
    const customerId = this.customerIdOf(customer);
    if (change.tier === 'free') {
      if (change.current !== null) {
        await this.cancel(change.current);
      }
      return { subscriptionId: null, status: 'active' };
    }
    if (change.card === null) {
      throw new AppError('NO_PAYMENT_METHOD', 'Add a payment method first: POST /api/billing/payment-method');
    }
    const price = this.settings.prices[change.tier];
    const metadata = { [STRIPE_METADATA.userId]: customer.userId, [STRIPE_METADATA.tier]: change.tier };
    const existing =
      change.current === null
        ? undefined
        : await this.call('read the subscription', () => this.stripe.subscriptions.retrieve(change.current!));
    let subscription: Stripe.Subscription;
    if (existing === undefined || ['canceled', 'incomplete_expired'].includes(existing.status)) {
      subscription = await this.call('start the subscription', () =>
        this.stripe.subscriptions.create(
          {
            customer: customerId,
            items: [{ price }],
            default_payment_method: change.card!.ref,
            off_session: true,
            // A first invoice that cannot be paid fails the request (a card error) instead of
            // leaving an incomplete subscription behind.
            payment_behavior: 'error_if_incomplete',
            metadata,
          },
          { idempotencyKey: `agentsite-subscribe-${customer.userId}-${change.requestId}` },
        ),
      );
    } else if (existing.items.data[0]?.price.id === price && change.pastDue) {
      // The same tier asked for again while past due: pay the open invoice now.
      const invoiceId =
        typeof existing.latest_invoice === 'string' ? existing.latest_invoice : existing.latest_invoice?.id;
      if (invoiceId !== undefined) {
        await this.call('pay the open invoice', () =>
          this.stripe.invoices.pay(
            invoiceId,
            { payment_method: change.card!.ref, off_session: true },
            { idempotencyKey: `agentsite-pay-${invoiceId}-${change.requestId}` },
          ),
        );
      }
      return { subscriptionId: existing.id, status: 'active' };
    } else {
      const item = existing.items.data[0];
      subscription = await this.call('change the subscription', () =>
        this.stripe.subscriptions.update(
          existing.id,
          {
            items: item === undefined ? [{ price }] : [{ id: item.id, price }],
            default_payment_method: change.card!.ref,
            off_session: true,
            // The difference is invoiced and charged now; a card that fails it fails the change.
            proration_behavior: 'always_invoice',
            payment_behavior: 'error_if_incomplete',
            metadata,
          },
          { idempotencyKey: `agentsite-subscription-${existing.id}-${change.requestId}` },
        ),
      );
    }
    const status = subscriptionStatus(subscription.status);
    if (status === 'ended') {
      throw new AppError('PAYMENT_FAILED', `Stripe left the subscription ${subscription.status}: it could not be paid`);
    }
    return { subscriptionId: subscription.id, status };
  }

  async readEvent(rawBody: Buffer, signature: string | undefined): Promise<BillingEvent> {
    if (signature === undefined || signature.length === 0) {
      throw new AppError('WEBHOOK_SECRET_INVALID', 'The Stripe-Signature header is missing');
    }
    let event: Stripe.Event;
    try {
      event = await this.stripe.webhooks.constructEventAsync(
        rawBody,
        signature,
        this.settings.webhookSecret,
        SIGNATURE_TOLERANCE_SECONDS,
      );
    } catch (err) {
      if (err instanceof Stripe.errors.StripeSignatureVerificationError) {
        throw new AppError(
          'WEBHOOK_SECRET_INVALID',
          'The Stripe-Signature does not match this endpoint, or is too old',
        );
      }
      throw new AppError('WEBHOOK_PAYLOAD_INVALID', 'The event is not a JSON object');
    }
    return readStripeEvent(event, this.settings.prices);
  }

  private async cancel(subscriptionId: string): Promise<void> {
    try {
      await this.stripe.subscriptions.cancel(
        subscriptionId,
        {},
        { idempotencyKey: `agentsite-cancel-${subscriptionId}` },
      );
    } catch (err) {
      // Already ended at Stripe (the dashboard, an unpaid invoice): the user is on free either way.
      if (err instanceof Stripe.errors.StripeInvalidRequestError) {
        this.logger.warn({ message: 'the subscription to cancel was already gone at Stripe', code: err.code });
        return;
      }
      throw stripeFailure(this.logger, 'cancel the subscription', err);
    }
  }

  private customerIdOf(customer: BillingCustomer): string {
    if (customer.customerId === null) {
      // The service ensures the customer before any call that needs it.
      throw new Error('a Stripe call needs the customer id first (ensureCustomer)');
    }
    return customer.customerId;
  }

  /** Calls Stripe; a declined card is PAYMENT_FAILED with Stripe's reason, anything else is logged (by type only). */
  private async call<T>(
    what: string,
    work: () => Promise<T>,
    refine?: (err: unknown) => AppError | undefined,
    unknownOutcome?: string,
  ): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw refine?.(err) ?? stripeFailure(this.logger, what, err, unknownOutcome);
    }
  }
}
