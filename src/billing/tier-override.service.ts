import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CreditsService } from '../credits/credits.service.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { BillingRepository } from './billing.repository.js';
import type { TierOverrideEntity } from './tier-override.entity.js';

/** What an admin sees of a user's plan: Stripe's side next to the tier in force, and the override. */
export interface AdminPlan {
  /** The tier the user's subscription sells at the provider; null without a subscription. */
  subscriptionTier: Tier | null;
  /** That subscription's status at the provider; null without a subscription (or not known yet). */
  providerStatus: SubscriptionStatus | null;
  /** The admin's tier change in force over the subscription's events; null when none holds. */
  override: TierOverrideView | null;
}

export interface TierOverrideView {
  tier: Tier;
  setBy: string | null;
  setAt: string;
  /** The last subscription event held back by the override: when, and what it would have set. */
  overridden: { at: string; tier: Tier; status: SubscriptionStatus } | null;
}

/**
 * An admin's tier change is an override: the subscription's later events (a renewal, a status change)
 * do not undo it; they are recorded (Stripe's tier and status, and what the override held back) and
 * shown to admins. It ends when the admin clears it (the tier returns to the subscription's) or the
 * plan changes deliberately: the user changes it through the API, a new subscription is adopted, or
 * the subscription's price changes at Stripe. Every admin change is a ledger row (`tier_change`).
 */
@Injectable()
export class TierOverrideService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly credits: CreditsService,
  ) {}

  /** The admin `by` sets the user's tier (the status stays); a ledger row records it. */
  async setByAdmin(by: string, userId: string, tier: Tier): Promise<void> {
    await this.billing.withLockedUser(userId, async (user, em) => {
      await this.billing.setPlan(em, userId, tier, user.subscriptionStatus);
      await this.billing.setTierOverride(em, { userId, tier, setBy: by, setAt: new Date() });
      await this.credits.recordTierChange(em, userId, { from: user.tier, to: tier, by });
    });
  }

  /**
   * Clears the override: the tier and status return to the subscription's (the free tier without
   * one). A change of tier is a ledger row, by the admin who cleared it.
   */
  async clearByAdmin(by: string, userId: string): Promise<void> {
    await this.billing.withLockedUser(userId, async (user, em) => {
      if (!(await this.billing.clearTierOverride(em, userId))) {
        return;
      }
      const customer = await this.billing.customer(userId, em);
      const subscribed = customer !== null && customer.subscriptionId !== null;
      const tier = subscribed ? (customer.subscriptionTier ?? user.tier) : 'free';
      const status = subscribed ? (customer.subscriptionStatus ?? user.subscriptionStatus) : 'active';
      await this.billing.setPlan(em, userId, tier, status);
      if (tier !== user.tier) {
        await this.credits.recordTierChange(em, userId, { from: user.tier, to: tier, by });
      }
    });
  }

  /**
   * A subscription event's plan, in the event's transaction (the user's row locked): true when an
   * override holds it back (recorded as overridden; the caller leaves the plan as it is).
   */
  async holdsBack(
    em: EntityManager,
    userId: string,
    event: { at: Date; tier: Tier; status: SubscriptionStatus },
  ): Promise<boolean> {
    if ((await this.billing.tierOverride(userId, em)) === null) {
      return false;
    }
    await this.billing.recordOverridden(em, userId, event);
    return true;
  }

  /** A deliberate change of plan (the user's own, a new subscription, a new price): the override ends. */
  async endOnPlanChange(em: EntityManager, userId: string): Promise<void> {
    await this.billing.clearTierOverride(em, userId);
  }

  /** The admin's view of the users' plans, by user id. */
  async adminPlans(userIds: string[]): Promise<Map<string, AdminPlan>> {
    const [customers, overrides] = await Promise.all([
      this.billing.customersOf(userIds),
      this.billing.tierOverrides(userIds),
    ]);
    const plans = new Map<string, AdminPlan>(
      userIds.map((id) => [id, { subscriptionTier: null, providerStatus: null, override: null }]),
    );
    for (const customer of customers) {
      if (customer.subscriptionId !== null) {
        plans.set(customer.userId, {
          subscriptionTier: customer.subscriptionTier,
          providerStatus: customer.subscriptionStatus,
          override: null,
        });
      }
    }
    for (const row of overrides) {
      const plan = plans.get(row.userId);
      if (plan !== undefined) {
        plan.override = overrideView(row);
      }
    }
    return plans;
  }
}

function overrideView(row: TierOverrideEntity): TierOverrideView {
  return {
    tier: row.tier,
    setBy: row.setBy,
    setAt: row.setAt.toISOString(),
    overridden:
      row.overriddenAt === null || row.overriddenTier === null || row.overriddenStatus === null
        ? null
        : { at: row.overriddenAt.toISOString(), tier: row.overriddenTier, status: row.overriddenStatus },
  };
}
