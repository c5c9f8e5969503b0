import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { BillingRepository } from './billing.repository.js';
import { BillingService } from './billing.service.js';
import { TierOverrideService } from './tier-override.service.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import {
  type BillingEvent,
  type InvoiceEvent,
  PAYMENT_PROVIDER,
  type PaymentProvider,
  type SubscriptionChangedEvent,
} from './payment-provider.js';

export interface EventReceipt {
  received: true;
  /** True when this event had been applied before: nothing changed. */
  duplicate: boolean;
}

/**
 * Applies the payment provider's webhook events. Each is verified by its signature, recorded by id
 * and applied in one transaction: a repeated delivery changes nothing, and an event that fails to
 * apply is not recorded, so the provider's retry applies it.
 */
@Injectable()
export class BillingEventsService {
  private readonly logger = new Logger('BillingEvents');

  constructor(
    private readonly billing: BillingRepository,
    private readonly service: BillingService,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
    private readonly metrics: MetricsService,
    private readonly overrides: TierOverrideService,
  ) {}

  async receive(rawBody: Buffer, signature: string | undefined): Promise<EventReceipt> {
    let event: BillingEvent;
    try {
      event = await this.provider.readEvent(rawBody, signature);
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'INTERNAL_ERROR';
      this.metrics.paymentEvents.inc({ type: 'unread', outcome: 'refused', code });
      throw err;
    }
    const applied = await this.billing.transaction(async (em) => {
      if (!(await this.billing.recordEvent(em, event.id, event.type))) {
        return false;
      }
      await this.apply(em, event);
      return true;
    });
    this.logger.log({
      message: 'payment provider event',
      eventId: event.id,
      eventType: event.type,
      duplicate: !applied,
    });
    // The type label is bounded: the kinds the service reads, every other type counted as `other`.
    this.metrics.paymentEvents.inc({
      type: event.kind === 'ignored' ? 'other' : event.type,
      outcome: applied ? 'applied' : 'duplicate',
      code: 'none',
    });
    return { received: true, duplicate: !applied };
  }

  private async apply(em: EntityManager, event: BillingEvent): Promise<void> {
    switch (event.kind) {
      case 'payment_succeeded':
        if (event.purchaseId !== null && isUuid(event.purchaseId)) {
          await this.service.settlePurchase(em, event.purchaseId, event.paymentRef, {
            userId: event.userId,
            amountCents: event.amountCents,
          });
        }
        return;
      case 'payment_failed':
        if (event.purchaseId !== null && isUuid(event.purchaseId)) {
          await this.service.failPurchase(em, event.purchaseId, event.paymentRef, `declined (${event.failure})`);
        }
        return;
      case 'invoice_paid':
      case 'invoice_failed':
      case 'subscription_changed':
        await this.applySubscription(em, event);
        return;
      case 'ignored':
        return;
    }
  }

  /**
   * A subscription's state: only for the subscription that sells the user's tier now, and only when
   * the event is not older than the newest state applied (events can arrive late and out of order).
   * The user's row is locked before the customer's, as the API's subscription changes do.
   */
  private async applySubscription(em: EntityManager, event: InvoiceEvent | SubscriptionChangedEvent): Promise<void> {
    const found = await this.billing.customerByProviderId(em, event.customerId);
    if (found === null) {
      return;
    }
    const user = await this.billing.lockUser(em, found.userId);
    const customer = await this.billing.customer(found.userId, em);
    if (customer === null || (customer.statusEventAt !== null && event.created < customer.statusEventAt)) {
      return;
    }
    const ours = event.subscriptionId !== null && event.subscriptionId === customer.subscriptionId;
    // Stripe's side is kept as it is (admins see it); the plan in force follows it unless an admin's
    // override holds it back (TierOverrideService), until the plan itself changes.
    const apply = async (tier: Tier, status: SubscriptionStatus, subscriptionId: string | null): Promise<void> => {
      const sold = subscriptionId === null ? null : tier;
      await this.billing.keepSubscriptionPlan(em, user.id, { tier: sold, status: sold === null ? null : status });
      if (!(await this.overrides.holdsBack(em, user.id, { at: event.created, tier, status }))) {
        await this.billing.setPlan(em, user.id, tier, status);
      }
      await this.billing.setSubscription(em, user.id, subscriptionId, event.created);
    };
    if (event.kind !== 'subscription_changed') {
      if (ours) {
        const status = event.kind === 'invoice_paid' ? 'active' : 'past_due';
        await apply(customer.subscriptionTier ?? user.tier, status, customer.subscriptionId);
      }
      return;
    }
    if (ours && event.status === 'ended') {
      // Cancelled at Stripe (the dashboard, or unpaid renewals exhausted): the free tier.
      await apply('free', 'canceled', null);
    } else if (ours && event.status !== 'ended') {
      if (event.tier !== null && customer.subscriptionTier !== null && event.tier !== customer.subscriptionTier) {
        // The subscription's price changed at Stripe: a deliberate change of plan ends an override.
        await this.overrides.endOnPlanChange(em, user.id);
      }
      await apply(event.tier ?? customer.subscriptionTier ?? user.tier, event.status, customer.subscriptionId);
    } else if (customer.subscriptionId === null && event.status === 'active' && event.tier !== null) {
      // A subscription the API started but could not record (the process stopped after Stripe's
      // answer): adopted, so a paid tier is never lost (a new subscription ends an override).
      await this.overrides.endOnPlanChange(em, user.id);
      await apply(event.tier, 'active', event.subscriptionId);
    }
  }
}

function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
