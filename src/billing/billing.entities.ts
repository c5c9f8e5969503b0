import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';

/** A user's account at the payment provider (Stripe's customer, and the subscription that sells the tier). */
@Entity({ name: 'billing_customers' })
export class BillingCustomerEntity {
  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  /** The provider's customer id (`cus_…`); unique: webhook events find the user by it. */
  @Column({ name: 'customer_id', type: 'text', unique: true })
  customerId: string;

  /** The subscription that sells the user's paid tier (`sub_…`); null on the free tier. */
  @Column({ name: 'subscription_id', type: 'text', nullable: true, unique: true })
  subscriptionId: string | null;

  /**
   * When the provider created the newest subscription event applied (its `created`): an older event
   * that arrives late changes nothing.
   */
  @Column({ name: 'status_event_at', type: 'timestamptz', precision: 3, nullable: true })
  statusEventAt: Date | null;

  /** The tier the subscription sells, as last applied (the API's change or an event); null on none. */
  @Column({ name: 'subscription_tier', type: 'text', nullable: true })
  subscriptionTier: Tier | null;

  /** The subscription's status, as last applied; null when unknown (before it was kept). */
  @Column({ name: 'subscription_status', type: 'text', nullable: true })
  subscriptionStatus: SubscriptionStatus | null;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

export const PURCHASE_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];

/**
 * One credit purchase. Written `pending` before the provider is asked to charge, so a payment that
 * succeeds is always found (by the API's answer or the provider's event, whichever comes first) and
 * its credits are granted exactly once, when the row leaves `pending` or `failed` for `succeeded`.
 */
@Entity({ name: 'credit_purchases' })
export class CreditPurchaseEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'integer' })
  credits: number;

  @Column({ name: 'amount_cents', type: 'integer' })
  amountCents: number;

  @Column({ type: 'text' })
  status: PurchaseStatus;

  /** The provider's payment (`pi_…`, or the test provider's charge id); unique. */
  @Column({ name: 'provider_ref', type: 'text', nullable: true, unique: true })
  providerRef: string | null;

  /** Why it failed, as the provider said it (a decline code, never card data). */
  @Column({ type: 'text', nullable: true })
  failure: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ name: 'settled_at', type: 'timestamptz', precision: 3, nullable: true })
  settledAt: Date | null;
}

/** A provider event already applied (Stripe's `evt_…`): a repeated delivery changes nothing. */
@Entity({ name: 'billing_events' })
export class BillingEventEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ name: 'received_at', type: 'timestamptz', precision: 3 })
  receivedAt: Date;
}
