import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager, In } from 'typeorm';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { UserEntity } from '../users/user.entity.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { lockUserRow } from '../users/user-lock.js';
import { UsersService } from '../users/users.service.js';
import { BillingCustomerEntity, CreditPurchaseEntity, type PurchaseStatus } from './billing.entities.js';
import { TierOverrideEntity } from './tier-override.entity.js';

/**
 * The SQL of billing: a user's customer and subscription at the provider (`billing_customers`),
 * credit purchases (`credit_purchases`) and the provider events already applied (`billing_events`),
 * through TypeORM; a user's plan and payment method (`users` columns) through UsersService: the users
 * feature owns the row. Writes that go together take
 * the caller's transaction; a user's row is locked before their customer's row, in every path.
 */
@Injectable()
export class BillingRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly userRows: UsersService,
  ) {}

  private get users() {
    return this.dataSource.getRepository(UserEntity);
  }

  findUserOrFail(userId: string): Promise<UserEntity> {
    return this.users.findOneByOrFail({ id: userId });
  }

  /** Written by the users feature, which owns the row. */
  async setPaymentMethod(userId: string, card: NonNullable<UserEntity['paymentMethod']>): Promise<void> {
    await this.userRows.setPaymentMethod(userId, card);
  }

  /** Runs `work` in a transaction that first locks the user's row (and hands it over). */
  withLockedUser<T>(userId: string, work: (user: UserEntity, em: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (em) => {
      const user = await lockUserRow(em, userId);
      return work(user, em);
    });
  }

  /** Runs `work` in a new transaction. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  lockUser(em: EntityManager, userId: string): Promise<UserEntity> {
    return lockUserRow(em, userId);
  }

  /** The tier and its subscription status, in `em`'s transaction; written by the users feature, which owns the row. */
  async setPlan(em: EntityManager, userId: string, tier: Tier, subscriptionStatus: SubscriptionStatus): Promise<void> {
    await this.userRows.setPlan(em, userId, tier, subscriptionStatus);
  }

  customer(userId: string, em?: EntityManager): Promise<BillingCustomerEntity | null> {
    return (em ?? this.dataSource.manager).getRepository(BillingCustomerEntity).findOneBy({ userId });
  }

  /** The user's customer, found by the provider's id (a webhook event's customer). */
  customerByProviderId(em: EntityManager, customerId: string): Promise<BillingCustomerEntity | null> {
    return em.getRepository(BillingCustomerEntity).findOneBy({ customerId });
  }

  /** Keeps the provider's customer id of the user; the one already kept wins a race (and is returned). */
  async saveCustomerId(userId: string, customerId: string): Promise<string> {
    const rows: Array<{ customer_id: string }> = await this.dataSource.query(
      `INSERT INTO billing_customers (user_id, customer_id) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET user_id = billing_customers.user_id
       RETURNING customer_id`,
      [userId, customerId],
    );
    return rows[0]!.customer_id;
  }

  /**
   * The subscription selling the tier now, and the instant from which older provider events are
   * stale (it never moves back: a change made now does not revive events older than one applied).
   */
  async setSubscription(
    em: EntityManager,
    userId: string,
    subscriptionId: string | null,
    statusEventAt: Date,
  ): Promise<void> {
    await em.query(
      `UPDATE billing_customers
          SET subscription_id = $2, status_event_at = GREATEST(status_event_at, $3), updated_at = now()
        WHERE user_id = $1`,
      [userId, subscriptionId, statusEventAt],
    );
  }

  /** What the subscription sells as last applied (Stripe's side, shown to admins), in `em`'s transaction. */
  async keepSubscriptionPlan(
    em: EntityManager,
    userId: string,
    plan: { tier: Tier | null; status: SubscriptionStatus | null },
  ): Promise<void> {
    await em
      .getRepository(BillingCustomerEntity)
      .update({ userId }, { subscriptionTier: plan.tier, subscriptionStatus: plan.status });
  }

  tierOverride(userId: string, em?: EntityManager): Promise<TierOverrideEntity | null> {
    return (em ?? this.dataSource.manager).getRepository(TierOverrideEntity).findOneBy({ userId });
  }

  tierOverrides(userIds: string[]): Promise<TierOverrideEntity[]> {
    return userIds.length === 0
      ? Promise.resolve([])
      : this.dataSource.getRepository(TierOverrideEntity).findBy({ userId: In(userIds) });
  }

  customersOf(userIds: string[]): Promise<BillingCustomerEntity[]> {
    return userIds.length === 0
      ? Promise.resolve([])
      : this.dataSource.getRepository(BillingCustomerEntity).findBy({ userId: In(userIds) });
  }

  /** An admin's override (a new one replaces the previous, and forgets what it held back). */
  async setTierOverride(
    em: EntityManager,
    row: Pick<TierOverrideEntity, 'userId' | 'tier' | 'setBy' | 'setAt'>,
  ): Promise<void> {
    await em
      .getRepository(TierOverrideEntity)
      .upsert({ ...row, overriddenAt: null, overriddenTier: null, overriddenStatus: null }, ['userId']);
  }

  /** A subscription event the override held back: when it was created, and what it would have set. */
  async recordOverridden(
    em: EntityManager,
    userId: string,
    event: { at: Date; tier: Tier; status: SubscriptionStatus },
  ): Promise<void> {
    await em
      .getRepository(TierOverrideEntity)
      .update({ userId }, { overriddenAt: event.at, overriddenTier: event.tier, overriddenStatus: event.status });
  }

  /** True when there was one to clear. */
  async clearTierOverride(em: EntityManager, userId: string): Promise<boolean> {
    return ((await em.getRepository(TierOverrideEntity).delete({ userId })).affected ?? 0) > 0;
  }

  async createPurchase(purchase: { id: string; userId: string; credits: number; amountCents: number }): Promise<void> {
    await this.dataSource.getRepository(CreditPurchaseEntity).insert({
      ...purchase,
      status: 'pending',
      providerRef: null,
      failure: null,
      createdAt: new Date(),
      settledAt: null,
    });
  }

  /** The purchase under a row lock held until `em`'s transaction ends. */
  lockPurchase(em: EntityManager, id: string): Promise<CreditPurchaseEntity | null> {
    return em
      .getRepository(CreditPurchaseEntity)
      .createQueryBuilder('p')
      .setLock('pessimistic_write')
      .where('p.id = :id', { id })
      .getOne();
  }

  /** Keeps the provider's reference of a purchase still pending, in `em`'s transaction. */
  async keepProviderRef(em: EntityManager, id: string, providerRef: string): Promise<void> {
    await em.query('UPDATE credit_purchases SET provider_ref = $2 WHERE id = $1', [id, providerRef]);
  }

  async settlePurchase(
    em: EntityManager,
    id: string,
    status: PurchaseStatus,
    providerRef: string | null,
    failure: string | null,
  ): Promise<void> {
    await em
      .getRepository(CreditPurchaseEntity)
      .update({ id }, { status, ...(providerRef === null ? {} : { providerRef }), failure, settledAt: new Date() });
  }

  /** The user's purchases still pending that were made before `before`, oldest first. */
  pendingPurchases(userId: string, before: Date, limit: number): Promise<CreditPurchaseEntity[]> {
    return this.dataSource
      .getRepository(CreditPurchaseEntity)
      .createQueryBuilder('p')
      .where('p.user_id = :userId', { userId })
      .andWhere("p.status = 'pending'")
      .andWhere('p.created_at < :before', { before })
      .orderBy('p.created_at', 'ASC')
      .limit(limit)
      .getMany();
  }

  /**
   * Every user's purchases still pending that were made before `before`, oldest first, after the
   * cursor `after` (the last one of the previous batch): the reconciler's batch.
   */
  stalePendingPurchases(
    before: Date,
    limit: number,
    after?: { createdAt: Date; id: string },
  ): Promise<CreditPurchaseEntity[]> {
    const qb = this.dataSource
      .getRepository(CreditPurchaseEntity)
      .createQueryBuilder('p')
      .where("p.status = 'pending'")
      .andWhere('p.created_at < :before', { before });
    if (after !== undefined) {
      qb.andWhere('(p.created_at, p.id) > (:afterAt, :afterId)', { afterAt: after.createdAt, afterId: after.id });
    }
    return qb.orderBy('p.created_at', 'ASC').addOrderBy('p.id', 'ASC').limit(limit).getMany();
  }

  /** Purchases pending now: how many, how many made before `stuckBefore`, and when the oldest was made. */
  async pendingStats(stuckBefore: Date): Promise<{ pending: number; stuck: number; oldest: Date | null }> {
    const rows: Array<{ pending: number; stuck: number; oldest: Date | null }> = await this.dataSource.query(
      `SELECT count(*)::int AS pending, (count(*) FILTER (WHERE created_at < $1))::int AS stuck,
              min(created_at) AS oldest
         FROM credit_purchases WHERE status = 'pending'`,
      [stuckBefore],
    );
    const row = rows[0]!;
    return { pending: row.pending, stuck: row.stuck, oldest: row.oldest === null ? null : new Date(row.oldest) };
  }

  /** The user's purchases, newest first (keyset on created_at, id). */
  purchases(userId: string, query: PageQuery): Promise<CreditPurchaseEntity[]> {
    const qb = this.dataSource
      .getRepository(CreditPurchaseEntity)
      .createQueryBuilder('p')
      .where('p.user_id = :userId', { userId });
    keysetWhere(qb, 'p', query.cursor, 'DESC');
    return qb
      .orderBy('p.created_at', 'DESC')
      .addOrderBy('p.id', 'DESC')
      .limit(query.limit + 1)
      .getMany();
  }

  /** Records a provider event in `em`'s transaction; false when it was recorded before (a repeated delivery). */
  async recordEvent(em: EntityManager, id: string, type: string): Promise<boolean> {
    const rows: unknown[] = await em.query(
      'INSERT INTO billing_events (id, type) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
      [id, type],
    );
    return rows.length === 1;
  }
}
