import type Stripe from 'stripe';
import { AppError } from '../common/app-error.js';
import { PAID_TIERS, type PaidTier } from '../config/settings.js';
import type { BillingEvent } from './payment-provider.js';
import { STRIPE_METADATA } from './stripe-client.js';

/** Stripe's subscription states in the service's three. */
export function subscriptionStatus(status: Stripe.Subscription.Status): 'active' | 'past_due' | 'ended' {
  switch (status) {
    case 'active':
    case 'trialing':
      return 'active';
    case 'past_due':
    case 'unpaid':
      return 'past_due';
    default:
      return 'ended';
  }
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  return value === null || value === undefined ? null : typeof value === 'string' ? value : value.id;
}

function invalid(event: Stripe.Event, what: string): AppError {
  return new AppError('WEBHOOK_PAYLOAD_INVALID', `The ${event.type} event ${event.id} has no ${what}`);
}

/**
 * Reads a verified event. Webhook payloads come in the endpoint's API version, not the SDK's: fields
 * that moved between versions are read from both places (an invoice's subscription).
 */
export function readStripeEvent(event: Stripe.Event, prices: Record<PaidTier, string>): BillingEvent {
  const head = { id: event.id, type: event.type, created: new Date(event.created * 1000) };
  switch (event.type) {
    case 'payment_intent.succeeded': {
      const intent = event.data.object;
      return {
        ...head,
        kind: 'payment_succeeded',
        purchaseId: intent.metadata?.[STRIPE_METADATA.purchaseId] ?? null,
        userId: intent.metadata?.[STRIPE_METADATA.userId] ?? null,
        paymentRef: intent.id,
        amountCents: intent.amount_received || intent.amount,
      };
    }
    case 'payment_intent.payment_failed': {
      const intent = event.data.object;
      const error = intent.last_payment_error;
      return {
        ...head,
        kind: 'payment_failed',
        purchaseId: intent.metadata?.[STRIPE_METADATA.purchaseId] ?? null,
        paymentRef: intent.id,
        failure: error?.decline_code ?? error?.code ?? 'payment_failed',
      };
    }
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const invoice = event.data.object as Stripe.Invoice & { subscription?: string | { id: string } | null };
      const customerId = idOf(invoice.customer);
      if (customerId === null) {
        throw invalid(event, 'customer');
      }
      const subscriptionId =
        idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(invoice.subscription ?? null);
      return {
        ...head,
        kind: event.type === 'invoice.paid' ? 'invoice_paid' : 'invoice_failed',
        customerId,
        subscriptionId,
      };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const subscription = event.data.object;
      const customerId = idOf(subscription.customer);
      if (customerId === null) {
        throw invalid(event, 'customer');
      }
      const priceId = subscription.items?.data?.[0]?.price?.id;
      const tier = PAID_TIERS.find((t) => prices[t] === priceId) ?? null;
      return {
        ...head,
        kind: 'subscription_changed',
        customerId,
        subscriptionId: subscription.id,
        status: event.type === 'customer.subscription.deleted' ? 'ended' : subscriptionStatus(subscription.status),
        tier,
      };
    }
    default:
      return { ...head, kind: 'ignored' };
  }
}
