import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, type Repository } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import { CHARGE_RELATION } from '../credits/credit-hooks.js';
import { preparedStatement } from '../common/database/prepared-statement.js';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { UserEntity } from './user.entity.js';
import type { SubscriptionStatus, Tier } from './user-fields.js';

/**
 * The part of a charge's one statement that sets the balance the charge leaves (see CHARGE_RELATION),
 * with `updated_at`, as setCredits does; the table's trigger tells every process at commit.
 */
export const BALANCE_CHARGE_PART =
  `UPDATE users SET credits = ${CHARGE_RELATION}.balance, updated_at = now() ` +
  `FROM ${CHARGE_RELATION} WHERE users.id = ${CHARGE_RELATION}.user_id`;

/** The fields a registration sets (the rest keep their column defaults). */
export type NewUser = Pick<UserEntity, 'email' | 'name' | 'passwordHash' | 'role' | 'credits'>;

/** The user's columns an admin or the user may change (credits go through CreditsService). */
export type UserChanges = Partial<
  Pick<
    UserEntity,
    'tier' | 'subscriptionStatus' | 'role' | 'tokensValidAfter' | 'acceptedTermsAt' | 'acceptedTermsVersion'
  >
>;

/** The SQL of `users` rows: ordinary reads and writes through TypeORM. */
@Injectable()
export class UsersRepository {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly caches: CacheInvalidationBus,
  ) {}

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ email });
  }

  existsByEmail(email: string): Promise<boolean> {
    return this.users.existsBy({ email });
  }

  /** Runs `work` in a new transaction. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.users.manager.transaction(work);
  }

  /** Inserts the user in `em`'s transaction (the unique email index refuses a duplicate with a QueryFailedError 23505). */
  insert(em: EntityManager, user: NewUser): Promise<UserEntity> {
    const users = em.getRepository(UserEntity);
    return users.save(users.create(user));
  }

  /** One page in creation order (keyset pagination), with one row more than asked to tell a next page. */
  page(query: PageQuery): Promise<UserEntity[]> {
    const qb = this.users.createQueryBuilder('u').orderBy('u.created_at', 'ASC').addOrderBy('u.id', 'ASC');
    keysetWhere(qb, 'u', query.cursor);
    return qb.take(query.limit + 1).getMany();
  }

  async update(id: string, changes: UserChanges): Promise<void> {
    await this.users.update({ id }, changes);
    // The table's trigger tells every process; this one drops its copy now (its next read sees the change).
    this.caches.dropLocal('user', id);
  }

  /** Replaces the password hash only while it is still `previousHash` (a concurrent change wins). */
  async replacePasswordHash(id: string, previousHash: string, passwordHash: string): Promise<void> {
    await this.users.update({ id, passwordHash: previousHash }, { passwordHash });
    this.caches.dropLocal('user', id);
  }

  /** The user's balance under a row lock held until `em`'s transaction ends; undefined when there is no such user. */
  async lockCredits(em: EntityManager, id: string): Promise<number | undefined> {
    const rows: Array<{ credits: string }> = await em.query(
      preparedStatement('users_lock_credits', 'SELECT credits FROM users WHERE id = $1 FOR UPDATE'),
      [id],
    );
    return rows[0] === undefined ? undefined : Number(rows[0].credits);
  }

  /**
   * Sets the balance in `em`'s transaction (CreditsService, which holds the row lock and writes the
   * ledger row with it). The table's trigger tells every process the new balance at commit;
   * `dropCached` drops this process's copy now as well.
   */
  async setCredits(em: EntityManager, id: string, credits: number, options: { dropCached: boolean }): Promise<void> {
    await em.query(
      preparedStatement('users_set_credits', 'UPDATE users SET credits = $2, updated_at = now() WHERE id = $1'),
      [id, credits],
    );
    if (options.dropCached) {
      this.caches.dropLocal('user', id);
    }
  }

  async setPaymentMethod(id: string, card: NonNullable<UserEntity['paymentMethod']>): Promise<void> {
    await this.users.update({ id }, { paymentMethod: card });
    this.caches.dropLocal('user', id);
  }

  /** The tier and its subscription status, in `em`'s transaction (billing's, which holds the user's row lock). */
  async setPlan(em: EntityManager, id: string, tier: Tier, subscriptionStatus: SubscriptionStatus): Promise<void> {
    await em.getRepository(UserEntity).update({ id }, { tier, subscriptionStatus });
    this.caches.dropLocal('user', id);
  }
}
