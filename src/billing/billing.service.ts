import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { type Page, pageOf, type PageQuery } from '../common/pagination.js';
import { CreditsService } from '../credits/credits.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { LedgerEntry } from '../credits/ledger-entry.js';
import type { UserEntity } from '../users/user.entity.js';
import { type Tier, TIERS } from '../users/user-fields.js';
import type { CreditPurchaseEntity } from './billing.entities.js';
import { BillingRepository } from './billing.repository.js';
import { type BillingResponse, type PurchaseResult, purchaseSummary, type PurchaseSummary } from './billing-views.js';
import { PurchaseMetrics, type ReconcileOutcome, type ReconcileVia } from './purchase-metrics.js';
import {
  type BillingCustomer,
  PAYMENT_PROVIDER,
  PaymentOutcomeUnknown,
  type PaymentProvider,
  paymentsNotConfigured,
} from './payment-provider.js';
import { CREDIT_PRICE_CENTS, limitsOf, TIER_LIMITS } from './tiers.js';

/** A pending purchase is looked up at the provider once it is this old (its event should have come). */
export const RECONCILE_AFTER_MS = 2 * 60_000;
/** A purchase the provider has no charge for after this long was never charged: it is marked failed. */
export const MISSING_CHARGE_FAILS_AFTER_MS = 60 * 60_000;
/** Purchases one read looks up at most (each is a call to the provider). */
const RECONCILE_BATCH = 5;

const NO_PAYMENT_METHOD_MESSAGE = 'Add a payment method first: POST /api/billing/payment-method';

/**
 * Payment method, credit purchases and subscriptions, through the payment provider. A purchase is
 * recorded `pending` before the provider is asked to charge; its credits are granted once, by
 * whichever settles it first: the provider's answer here or its event (BillingEventsService).
 */
@Injectable()
export class BillingService {
  private readonly logger = new Logger('BillingService');

  constructor(
    private readonly billing: BillingRepository,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
    private readonly credits: CreditsService,
    private readonly metrics: MetricsService,
    private readonly purchaseMetrics: PurchaseMetrics,
  ) {}

  async describe(userId: string): Promise<BillingResponse> {
    const user = await this.billing.findUserOrFail(userId);
    return {
      tier: user.tier,
      credits: user.credits,
      subscriptionStatus: user.subscriptionStatus,
      paymentMethod: user.paymentMethod ? { brand: user.paymentMethod.brand, last4: user.paymentMethod.last4 } : null,
      limits: limitsOf(user),
      plans: TIERS.map((tier) => ({ tier, ...TIER_LIMITS[tier] })),
      provider: this.provider.name,
      publishableKey: this.provider.publishableKey,
    };
  }

  /** The caller's credit ledger (credits are the user's own, whichever workspace is active). */
  ledger(userId: string, limit: number, cursor: string | undefined): Promise<Page<LedgerEntry>> {
    return this.credits.ledger(userId, limit, cursor);
  }

  /** The caller's credit purchases, newest first, with the state of each payment. */
  async purchases(userId: string, query: PageQuery): Promise<Page<PurchaseSummary>> {
    return pageOf(await this.billing.purchases(userId, query), query.limit, purchaseSummary);
  }

  /**
   * Settles the user's purchases still pending well after their charge (the provider's answer and
   * its event both went missing: a crash, a webhook endpoint not configured) by asking the provider.
   * Called when the user reads their billing; the schedule's batch (PurchaseReconcileService) does the
   * same for every user. A provider that cannot be asked leaves them as they are.
   */
  async reconcile(userId: string, now = new Date()): Promise<void> {
    if (!this.provider.configured) {
      return;
    }
    const stale = await this.billing.pendingPurchases(
      userId,
      new Date(now.getTime() - RECONCILE_AFTER_MS),
      RECONCILE_BATCH,
    );
    for (const purchase of stale) {
      await this.reconcileOne(purchase, now, 'read');
    }
  }

  /**
   * Asks the provider about one pending purchase and settles it through the webhook's path
   * (settlePurchase / failPurchase, under the purchase's row lock): whichever of the event, the
   * user's read and the schedule comes first grants the credits, the others find it settled.
   */
  async reconcileOne(purchase: CreditPurchaseEntity, now: Date, via: ReconcileVia): Promise<ReconcileOutcome> {
    let outcome: ReconcileOutcome;
    try {
      const found = await this.provider.lookupCharge(purchase);
      outcome = await this.billing.transaction(async (em): Promise<ReconcileOutcome> => {
        if (found.status === 'succeeded') {
          return (await this.settlePurchase(em, purchase.id, found.ref)) ? 'succeeded' : 'already_settled';
        }
        if (found.status === 'failed') {
          return (await this.failPurchase(em, purchase.id, found.ref, found.failure)) ? 'failed' : 'already_settled';
        }
        if (
          found.status === 'missing' &&
          now.getTime() - purchase.createdAt.getTime() > MISSING_CHARGE_FAILS_AFTER_MS
        ) {
          const never = 'never charged: the payment provider has no such payment';
          return (await this.failPurchase(em, purchase.id, null, never)) ? 'failed' : 'already_settled';
        }
        return 'still_pending';
      });
    } catch (err) {
      outcome = 'error';
      this.logger.warn({
        message: 'a pending purchase could not be looked up; it stays pending',
        purchaseId: purchase.id,
        errorType: err instanceof Error ? err.name : 'unknown',
      });
    }
    this.purchaseMetrics.reconciled.inc({ outcome, via });
    return outcome;
  }

  /** Without a payment provider, every payment is refused before anything else is looked at. */
  private requirePayments(): void {
    if (!this.provider.configured) {
      throw paymentsNotConfigured();
    }
  }

  /** The user as the provider knows them; their customer is created there (and kept) the first time. */
  private async customerOf(user: UserEntity): Promise<BillingCustomer> {
    const known = (await this.billing.customer(user.id))?.customerId ?? null;
    const customer: BillingCustomer = { userId: user.id, email: user.email, customerId: known };
    if (known === null) {
      const created = await this.provider.ensureCustomer(customer);
      if (created !== null) {
        customer.customerId = await this.billing.saveCustomerId(user.id, created);
      }
    }
    return customer;
  }

  async setPaymentMethod(userId: string, token: string): Promise<BillingResponse> {
    this.requirePayments();
    const customer = await this.customerOf(await this.billing.findUserOrFail(userId));
    const card = await this.provider.attach(customer, token, randomUUID());
    await this.billing.setPaymentMethod(userId, card);
    return this.describe(userId);
  }

  /** A client secret for the console's card field (Stripe's SetupIntent); the card it confirms is then attached. */
  async setupIntent(userId: string): Promise<{ clientSecret: string }> {
    this.requirePayments();
    const customer = await this.customerOf(await this.billing.findUserOrFail(userId));
    return this.provider.setupIntent(customer, randomUUID());
  }

  /**
   * Buys credits. The purchase is written (pending) before the charge, so a payment that goes
   * through is never lost: a declined card marks it failed and adds nothing; a charge whose outcome
   * is unknown stays pending until the provider's event settles it.
   */
  async purchaseCredits(userId: string, amount: number): Promise<PurchaseResult> {
    this.requirePayments();
    const amountCents = amount * CREDIT_PRICE_CENTS;
    if (amountCents < this.provider.minimumChargeCents) {
      throw AppError.validation([
        {
          field: 'amount',
          message: `must be at least ${Math.ceil(this.provider.minimumChargeCents / CREDIT_PRICE_CENTS)}: the payment provider's smallest charge`,
        },
      ]);
    }
    const user = await this.billing.findUserOrFail(userId);
    const card = user.paymentMethod;
    if (card === null) {
      throw new AppError('NO_PAYMENT_METHOD', NO_PAYMENT_METHOD_MESSAGE);
    }
    const customer = await this.customerOf(user);
    const purchase = { id: randomUUID(), userId, credits: amount, amountCents };
    await this.billing.createPurchase(purchase);
    let charged;
    try {
      charged = await this.provider.chargeCredits(customer, card, purchase);
    } catch (err) {
      if (err instanceof AppError && !(err instanceof PaymentOutcomeUnknown)) {
        await this.billing.transaction((em) => this.failPurchase(em, purchase.id, null, err.message));
      } else {
        this.metrics.creditPurchases.inc({ outcome: 'pending' });
      }
      throw err;
    }
    if (charged.outcome === 'succeeded') {
      await this.billing.transaction((em) => this.settlePurchase(em, purchase.id, charged.ref));
    } else {
      this.metrics.creditPurchases.inc({ outcome: 'pending' });
      await this.billing.transaction(async (em) => {
        // Pending: the provider's event grants the credits. Keep its reference for the operator.
        const row = await this.billing.lockPurchase(em, purchase.id);
        if (row?.status === 'pending' && row.providerRef === null) {
          await this.billing.keepProviderRef(em, purchase.id, charged.ref);
        }
      });
    }
    const [balance, row] = await Promise.all([this.credits.balance(userId), this.purchaseRow(purchase.id)]);
    return { credits: balance, purchase: purchaseSummary(row) };
  }

  private async purchaseRow(id: string): Promise<CreditPurchaseEntity> {
    const row = await this.billing.transaction((em) => this.billing.lockPurchase(em, id));
    if (row === null) {
      throw new Error(`purchase ${id} vanished`);
    }
    return row;
  }

  /**
   * Grants a purchase's credits once: the row leaves `pending` (or `failed`: a payment the provider
   * reports succeeded after all) for `succeeded`, and the ledger row is written in the same
   * transaction. False when it had been granted already, or is not known.
   */
  async settlePurchase(
    em: EntityManager,
    purchaseId: string,
    paymentRef: string,
    expect?: { userId: string | null; amountCents: number },
  ): Promise<boolean> {
    const row = await this.billing.lockPurchase(em, purchaseId);
    if (row === null || row.status === 'succeeded') {
      return false;
    }
    if (
      expect !== undefined &&
      ((expect.userId !== null && expect.userId !== row.userId) || expect.amountCents !== row.amountCents)
    ) {
      // A signed event, but not the payment this purchase asked for: grant nothing, tell the operator.
      this.logger.warn({ message: 'a payment event does not match its purchase; nothing granted', purchaseId });
      return false;
    }
    await this.billing.settlePurchase(em, purchaseId, 'succeeded', paymentRef, null);
    await this.credits.adjust(row.userId, row.credits, 'purchase', `purchase:${purchaseId}`, em);
    this.metrics.creditPurchases.inc({ outcome: 'succeeded' });
    return true;
  }

  /** Marks a pending purchase failed (a settled one stays as it is); false when it was not pending. */
  async failPurchase(
    em: EntityManager,
    purchaseId: string,
    paymentRef: string | null,
    failure: string,
  ): Promise<boolean> {
    const row = await this.billing.lockPurchase(em, purchaseId);
    if (row?.status !== 'pending') {
      return false;
    }
    await this.billing.settlePurchase(em, purchaseId, 'failed', paymentRef, failure.slice(0, 500));
    this.metrics.creditPurchases.inc({ outcome: 'failed' });
    return true;
  }

  /**
   * Changes the tier: a paid tier is charged now (a past-due subscription asked for again is paid
   * now and becomes active), `free` ends the subscription. Serialised per user by the row lock.
   */
  async changeSubscription(userId: string, tier: Tier): Promise<BillingResponse> {
    const requestId = randomUUID();
    const user = await this.billing.findUserOrFail(userId);
    const current = (await this.billing.customer(userId))?.subscriptionId ?? null;
    if (tier !== 'free' || current !== null) {
      this.requirePayments();
      if (tier !== 'free' && user.paymentMethod === null) {
        throw new AppError('NO_PAYMENT_METHOD', NO_PAYMENT_METHOD_MESSAGE);
      }
    }
    // Outside the lock, committed at once: a provider event can find the customer however this ends.
    const customer = tier === 'free' && current === null ? undefined : await this.customerOf(user);
    await this.billing.withLockedUser(userId, async (locked, em) => {
      const subscriptionId = (await this.billing.customer(userId, em))?.subscriptionId ?? null;
      // The user's own change of plan is deliberate: an admin's override ends (TierOverrideService).
      await this.billing.clearTierOverride(em, userId);
      if (customer === undefined || (tier === 'free' && subscriptionId === null)) {
        await this.billing.setPlan(em, userId, 'free', 'active');
        return;
      }
      const result = await this.provider.changeSubscription(customer, {
        tier,
        current: subscriptionId,
        pastDue: locked.subscriptionStatus === 'past_due',
        card: locked.paymentMethod,
        requestId,
      });
      if (customer.customerId !== null) {
        // Provider events created before now describe an older state: they change nothing.
        await this.billing.setSubscription(em, userId, result.subscriptionId, new Date());
        const sold = result.subscriptionId === null ? null : tier;
        await this.billing.keepSubscriptionPlan(em, userId, { tier: sold, status: sold && result.status });
      }
      await this.billing.setPlan(em, userId, tier, result.status);
    });
    return this.describe(userId);
  }
}
