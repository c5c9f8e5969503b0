import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { UserEntity } from '../users/user.entity.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { lockUserRow } from '../users/user-lock.js';
import { UsersService } from '../users/users.service.js';
import { BillingCustomerEntity, CreditPurchaseEntity, type PurchaseStatus } from './billing.entities.js';

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
