import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { type Page } from '../common/pagination.js';
import { CreditsService } from '../credits/credits.service.js';
import type { LedgerEntry } from '../credits/ledger-entry.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { BillingRepository } from './billing.repository.js';
import { PAYMENT_PROVIDER, type PaymentProvider, paymentsNotConfigured } from './payment-provider.js';
import { CREDIT_PRICE_CENTS, limitsOf, TIER_LIMITS, type TierLimits } from './tiers.js';

export interface BillingResponse {
  tier: Tier;
  credits: number;
  subscriptionStatus: SubscriptionStatus;
  paymentMethod: { brand: string; last4: string } | null;
  limits: TierLimits;
}

/** Payment method, credit purchases and subscriptions, through the payment provider. */
@Injectable()
export class BillingService {
  constructor(
    private readonly users: BillingRepository,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
    private readonly credits: CreditsService,
  ) {}

  async describe(userId: string): Promise<BillingResponse> {
    const user = await this.users.findUserOrFail(userId);
    return {
      tier: user.tier,
      credits: user.credits,
      subscriptionStatus: user.subscriptionStatus,
      paymentMethod: user.paymentMethod ? { brand: user.paymentMethod.brand, last4: user.paymentMethod.last4 } : null,
      limits: limitsOf(user),
    };
  }

  /** The caller's credit ledger (credits are the user's own, whichever workspace is active). */
  ledger(userId: string, limit: number, cursor: string | undefined): Promise<Page<LedgerEntry>> {
    return this.credits.ledger(userId, limit, cursor);
  }

  /** Without a payment provider, every payment is refused before anything else is looked at. */
  private requirePayments(): void {
    if (!this.provider.configured) {
      throw paymentsNotConfigured();
    }
  }

  async setPaymentMethod(userId: string, token: string): Promise<BillingResponse> {
    this.requirePayments();
    const card = await this.provider.attach(token);
    await this.users.setPaymentMethod(userId, card);
    return this.describe(userId);
  }

  /**
   * Buys credits. The charge happens inside the transaction that adds them: a declined card rolls
   * everything back, so a failed purchase leaves no credits and no rows.
   */
  async purchaseCredits(userId: string, amount: number): Promise<{ credits: number }> {
    this.requirePayments();
    return this.users.withLockedUser(userId, async (user, em) => {
      if (user.paymentMethod === null) {
        throw new AppError('NO_PAYMENT_METHOD', 'Add a payment method first: POST /api/billing/payment-method');
      }
      const balance = await this.credits.adjust(userId, amount, 'purchase', undefined, em);
      await this.provider.charge(user.paymentMethod, amount * CREDIT_PRICE_CENTS, `${amount} credits`);
      return { credits: balance };
    });
  }

  /** Changes the tier: paid tiers are charged now (and a past-due subscription becomes active again). */
  async changeSubscription(userId: string, tier: Tier): Promise<BillingResponse> {
    await this.users.withLockedUser(userId, async (user, em) => {
      const price = TIER_LIMITS[tier].priceCents;
      if (price > 0) {
        this.requirePayments();
        if (user.paymentMethod === null) {
          throw new AppError('NO_PAYMENT_METHOD', 'Add a payment method first: POST /api/billing/payment-method');
        }
        await this.provider.charge(user.paymentMethod, price, `${tier} subscription`);
      }
      await this.users.setTier(em, userId, tier);
    });
    return this.describe(userId);
  }
}
