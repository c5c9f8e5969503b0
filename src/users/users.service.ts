import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CreditsService } from '../credits/credits.service.js';
import { AppError } from '../common/app-error.js';
import { type Page, pageOf, type PageQuery } from '../common/pagination.js';
import type { UserEntity } from './user.entity.js';
import type { Role, SubscriptionStatus, Tier } from './user-fields.js';
import { type NewUser, type UserChanges, UsersRepository } from './users.repository.js';

export interface UserResponse {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  tier: Tier;
  credits: number;
  acceptedTermsAt: string | null;
  subscriptionStatus: SubscriptionStatus;
  createdAt: string;
}

export interface UserPatch {
  tier?: Tier;
  credits?: number;
  subscriptionStatus?: SubscriptionStatus;
  role?: Role;
}

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly credits: CreditsService,
  ) {}

  /**
   * Admins are the users whose role is admin: granted by an operator (`npm run admin -- grant`) or by
   * another admin (PATCH /api/admin/users/:id), never by registering.
   */
  isAdmin(user: UserEntity): boolean {
    return user.role === 'admin';
  }

  toResponse(user: UserEntity): UserResponse {
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      role: this.isAdmin(user) ? 'admin' : 'user',
      tier: user.tier,
      credits: user.credits,
      acceptedTermsAt: user.acceptedTermsAt?.toISOString() ?? null,
      subscriptionStatus: user.subscriptionStatus,
      createdAt: user.createdAt.toISOString(),
    };
  }

  async findOrFail(id: string): Promise<UserEntity> {
    const user = await this.users.findById(id);
    if (user === null) {
      throw new AppError('NOT_FOUND', 'No user with this id');
    }
    return user;
  }

  async list(query: PageQuery): Promise<Page<UserResponse>> {
    const rows = await this.users.page(query);
    return pageOf(rows, query.limit, (u) => this.toResponse(u));
  }

  /** An admin's change; a new credit balance is written through the ledger as an adjustment. */
  async patch(id: string, patch: UserPatch): Promise<UserResponse> {
    const { credits, ...rest } = patch;
    const user = await this.findOrFail(id);
    if (credits !== undefined) {
      await this.credits.setBalance(id, credits, 'admin_adjustment');
    }
    const changes = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
    if (Object.keys(changes).length > 0) {
      await this.users.update(id, changes);
    }
    return this.toResponse(await this.findOrFail(user.id));
  }

  // For AuthService (registration, sign-in, sessions): the users' rows it reads and writes.

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.findByEmail(email);
  }

  isEmailTaken(email: string): Promise<boolean> {
    return this.users.existsByEmail(email);
  }

  /**
   * Inserts the user with its opening credits' ledger row, in one transaction; a duplicate email
   * rejects with the driver's unique violation (23505).
   */
  register(user: NewUser): Promise<UserEntity> {
    return this.users.transaction(async (em) => {
      const created = await this.users.insert(em, user);
      await this.credits.recordOpening(em, created.id, created.credits, 'signup_grant');
      return created;
    });
  }

  /** Replaces the password hash unless another change replaced it first. */
  replacePasswordHash(user: UserEntity, passwordHash: string): Promise<void> {
    return this.users.replacePasswordHash(user.id, user.passwordHash, passwordHash);
  }

  /** A change the user makes to their own account (token cut-off, terms accepted). */
  updateAccount(id: string, changes: UserChanges): Promise<void> {
    return this.users.update(id, changes);
  }

  /** The card on file (billing, after the provider accepted it). */
  setPaymentMethod(id: string, card: NonNullable<UserEntity['paymentMethod']>): Promise<void> {
    return this.users.setPaymentMethod(id, card);
  }

  /** The tier and its subscription status, in `em`'s transaction (billing's, which holds the user's row lock). */
  setPlan(em: EntityManager, id: string, tier: Tier, subscriptionStatus: SubscriptionStatus): Promise<void> {
    return this.users.setPlan(em, id, tier, subscriptionStatus);
  }
}
