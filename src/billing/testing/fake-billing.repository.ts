import type { EntityManager } from 'typeorm';
import type { PageQuery } from '../../common/pagination.js';
import { standIn } from '../../common/testing/stand-in.js';
import { UserEntity } from '../../users/user.entity.js';
import type { SubscriptionStatus, Tier } from '../../users/user-fields.js';
import type { BillingCustomerEntity, CreditPurchaseEntity, PurchaseStatus } from '../billing.entities.js';
import type { BillingRepository } from '../billing.repository.js';
import type { TierOverrideEntity } from '../tier-override.entity.js';

type Used =
  | 'findUserOrFail'
  | 'setPaymentMethod'
  | 'withLockedUser'
  | 'transaction'
  | 'lockUser'
  | 'setPlan'
  | 'customer'
  | 'customerByProviderId'
  | 'saveCustomerId'
  | 'setSubscription'
  | 'createPurchase'
  | 'lockPurchase'
  | 'keepProviderRef'
  | 'settlePurchase'
  | 'pendingPurchases'
  | 'purchases'
  | 'recordEvent'
  | 'keepSubscriptionPlan'
  | 'tierOverride'
  | 'recordOverridden'
  | 'clearTierOverride';

/**
 * Billing's rows in memory: users' plans and cards, customers, purchases and the events applied.
 * A transaction that throws is rolled back (the rows as they were before it), as PostgreSQL does,
 * so "an event that fails to apply is not recorded" can be tested.
 */
export class FakeBillingRepository implements Pick<BillingRepository, Used> {
  users = new Map<string, UserEntity>();
  customers = new Map<string, BillingCustomerEntity>();
  purchaseRows = new Map<string, CreditPurchaseEntity>();
  events = new Set<string>();
  overrides = new Map<string, TierOverrideEntity>();
  /** The balance a user row shows (the credits feature owns it): wired to the credits fake by the spec. */
  balanceOf: (userId: string) => number = () => 0;

  /** The transaction handle the fake hands to the work it runs (never queried: the fake's methods do the work). */
  readonly tx = standIn<EntityManager>({});

  seedUser(fields: Partial<UserEntity> & Pick<UserEntity, 'id'>): UserEntity {
    const user = Object.assign(new UserEntity(), {
      email: `${fields.id}@example.com`,
      name: null,
      role: 'user',
      tier: 'free',
      credits: 0,
      subscriptionStatus: 'active',
      paymentMethod: null,
      ...fields,
    });
    this.users.set(user.id, user);
    return user;
  }

  async findUserOrFail(userId: string): Promise<UserEntity> {
    const user = this.users.get(userId);
    if (user === undefined) {
      throw new Error(`no user ${userId}`);
    }
    return { ...user, credits: this.balanceOf(userId) };
  }

  async setPaymentMethod(userId: string, card: NonNullable<UserEntity['paymentMethod']>): Promise<void> {
    this.users.get(userId)!.paymentMethod = card;
  }

  async withLockedUser<T>(userId: string, work: (user: UserEntity, em: EntityManager) => Promise<T>): Promise<T> {
    return this.transaction(async (em) => work(await this.lockUser(em, userId), em));
  }

  async transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    const saved = this.snapshot();
    try {
      return await work(this.tx);
    } catch (err) {
      Object.assign(this, saved);
      throw err;
    }
  }

  async lockUser(_em: EntityManager, userId: string): Promise<UserEntity> {
    return this.findUserOrFail(userId);
  }

  async setPlan(_em: EntityManager, userId: string, tier: Tier, subscriptionStatus: SubscriptionStatus): Promise<void> {
    Object.assign(this.users.get(userId)!, { tier, subscriptionStatus });
  }

  async customer(userId: string): Promise<BillingCustomerEntity | null> {
    const row = this.customers.get(userId);
    return row === undefined ? null : { ...row };
  }

  async customerByProviderId(_em: EntityManager, customerId: string): Promise<BillingCustomerEntity | null> {
    return [...this.customers.values()].find((c) => c.customerId === customerId) ?? null;
  }

  async saveCustomerId(userId: string, customerId: string): Promise<string> {
    const known = this.customers.get(userId);
    if (known !== undefined) {
      return known.customerId;
    }
    this.customers.set(userId, {
      userId,
      customerId,
      subscriptionId: null,
      subscriptionTier: null,
      subscriptionStatus: null,
      statusEventAt: null,
      updatedAt: new Date(),
    });
    return customerId;
  }

  async setSubscription(
    _em: EntityManager,
    userId: string,
    subscriptionId: string | null,
    statusEventAt: Date,
  ): Promise<void> {
    const row = this.customers.get(userId);
    if (row !== undefined) {
      row.subscriptionId = subscriptionId;
      // It never moves back (GREATEST).
      if (row.statusEventAt === null || statusEventAt > row.statusEventAt) {
        row.statusEventAt = statusEventAt;
      }
    }
  }

  async createPurchase(purchase: { id: string; userId: string; credits: number; amountCents: number }): Promise<void> {
    this.purchaseRows.set(purchase.id, {
      ...purchase,
      status: 'pending',
      providerRef: null,
      failure: null,
      createdAt: new Date(),
      settledAt: null,
    });
  }

  async lockPurchase(_em: EntityManager, id: string): Promise<CreditPurchaseEntity | null> {
    const row = this.purchaseRows.get(id);
    return row === undefined ? null : { ...row };
  }

  async keepProviderRef(_em: EntityManager, id: string, providerRef: string): Promise<void> {
    const purchase = this.purchaseRows.get(id);
    if (purchase !== undefined) {
      purchase.providerRef = providerRef;
    }
  }

  async settlePurchase(
    _em: EntityManager,
    id: string,
    status: PurchaseStatus,
    providerRef: string | null,
    failure: string | null,
  ): Promise<void> {
    const row = this.purchaseRows.get(id);
    if (row !== undefined) {
      Object.assign(row, { status, failure, settledAt: new Date(), ...(providerRef === null ? {} : { providerRef }) });
    }
  }

  async pendingPurchases(userId: string, before: Date, limit: number): Promise<CreditPurchaseEntity[]> {
    return [...this.purchaseRows.values()]
      .filter((p) => p.userId === userId && p.status === 'pending' && p.createdAt < before)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .slice(0, limit);
  }

  async purchases(userId: string, query: PageQuery): Promise<CreditPurchaseEntity[]> {
    return [...this.purchaseRows.values()]
      .filter((p) => p.userId === userId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .slice(0, query.limit + 1);
  }

  async recordEvent(_em: EntityManager, id: string): Promise<boolean> {
    if (this.events.has(id)) {
      return false;
    }
    this.events.add(id);
    return true;
  }

  private snapshot(): Pick<FakeBillingRepository, 'users' | 'customers' | 'purchaseRows' | 'events'> {
    const copy = <K, V extends object>(m: Map<K, V>): Map<K, V> => new Map([...m].map(([k, v]) => [k, { ...v }]));
    return {
      users: copy(this.users),
      customers: copy(this.customers),
      purchaseRows: copy(this.purchaseRows),
      events: new Set(this.events),
    };
  }

  async keepSubscriptionPlan(
    _em: EntityManager,
    userId: string,
    plan: { tier: Tier | null; status: SubscriptionStatus | null },
  ): Promise<void> {
    const customer = this.customers.get(userId);
    if (customer !== undefined) {
      Object.assign(customer, { subscriptionTier: plan.tier, subscriptionStatus: plan.status });
    }
  }

  async tierOverride(userId: string): Promise<TierOverrideEntity | null> {
    return this.overrides.get(userId) ?? null;
  }

  async recordOverridden(
    _em: EntityManager,
    userId: string,
    event: { at: Date; tier: Tier; status: SubscriptionStatus },
  ): Promise<void> {
    const row = this.overrides.get(userId);
    if (row !== undefined) {
      Object.assign(row, { overriddenAt: event.at, overriddenTier: event.tier, overriddenStatus: event.status });
    }
  }

  async clearTierOverride(_em: EntityManager, userId: string): Promise<boolean> {
    return this.overrides.delete(userId);
  }
}
