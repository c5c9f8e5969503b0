import type { PaymentProviderName } from '../config/settings.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import type { CreditPurchaseEntity, PurchaseStatus } from './billing.entities.js';
import type { TierLimits } from './tiers.js';

export interface BillingResponse {
  tier: Tier;
  credits: number;
  subscriptionStatus: SubscriptionStatus;
  paymentMethod: { brand: string; last4: string } | null;
  limits: TierLimits;
  /** Every tier with its limits and price, lowest first: what a change of plan gives or takes away. */
  plans: TierPlan[];
  /** Who takes the payments here, so a client knows which card field to show. */
  provider: PaymentProviderName;
  /** Stripe's publishable key for its card field; null when the provider has none. */
  publishableKey: string | null;
}

/** One tier of TIER_LIMITS, named. */
export interface TierPlan extends TierLimits {
  tier: Tier;
}

export interface PurchaseSummary {
  id: string;
  credits: number;
  amountCents: number;
  status: PurchaseStatus;
  createdAt: string;
  settledAt: string | null;
}

export interface PurchaseResult {
  /** The balance now: with the credits when the payment succeeded, without them while it is pending. */
  credits: number;
  purchase: PurchaseSummary;
}

export function purchaseSummary(row: CreditPurchaseEntity): PurchaseSummary {
  return {
    id: row.id,
    credits: row.credits,
    amountCents: row.amountCents,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    settledAt: row.settledAt?.toISOString() ?? null,
  };
}
