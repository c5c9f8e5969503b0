import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import type { Tier } from '../users/user-fields.js';
import { lockUserRow } from '../users/user-lock.js';

/**
 * The SQL of a user's plan and payment method (`users` columns), through TypeORM. A payment runs in
 * a transaction that locks the user's row first, so the charge and what it pays for commit together.
 */
@Injectable()
export class BillingRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get users() {
    return this.dataSource.getRepository(UserEntity);
  }

  findUserOrFail(userId: string): Promise<UserEntity> {
    return this.users.findOneByOrFail({ id: userId });
  }

  async setPaymentMethod(userId: string, card: NonNullable<UserEntity['paymentMethod']>): Promise<void> {
    await this.users.update({ id: userId }, { paymentMethod: card });
  }

  /** Runs `work` in a transaction that first locks the user's row (and hands it over). */
  withLockedUser<T>(userId: string, work: (user: UserEntity, em: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (em) => {
      const user = await lockUserRow(em, userId);
      return work(user, em);
    });
  }

  /** The new tier, its subscription active again, in `em`'s transaction. */
  async setTier(em: EntityManager, userId: string, tier: Tier): Promise<void> {
    await em.getRepository(UserEntity).update({ id: userId }, { tier, subscriptionStatus: 'active' });
  }
}
