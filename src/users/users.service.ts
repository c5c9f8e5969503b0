import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { type DataSource, type Repository } from 'typeorm';
import { CreditsService } from '../credits/credits.service.js';
import { AppError } from '../common/app-error.js';
import { type Page, pageOf, keysetWhere, type PageQuery } from '../common/pagination.js';
import { type Role, type SubscriptionStatus, type Tier, UserEntity } from './user.entity.js';

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
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const user = await this.users.findOneBy({ id });
    if (user === null) {
      throw new AppError('NOT_FOUND', 'No user with this id');
    }
    return user;
  }

  async list(query: PageQuery): Promise<Page<UserResponse>> {
    const qb = this.users.createQueryBuilder('u').orderBy('u.created_at', 'ASC').addOrderBy('u.id', 'ASC');
    keysetWhere(qb, 'u', query.cursor);
    const rows = await qb.take(query.limit + 1).getMany();
    return pageOf(rows, query.limit, (u) => this.toResponse(u));
  }

  /** An admin's change; a new credit balance is written through the ledger as an adjustment. */
  async patch(id: string, patch: UserPatch): Promise<UserResponse> {
    const { credits, ...rest } = patch;
    const user = await this.findOrFail(id);
    if (credits !== undefined) {
      await this.dataSource.transaction(async (em) => {
        const rows: Array<{ credits: string }> = await em.query('SELECT credits FROM users WHERE id = $1 FOR UPDATE', [
          id,
        ]);
        await this.credits.adjust(id, credits - Number(rows[0]!.credits), 'admin_adjustment', undefined, em);
      });
    }
    const changes = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
    if (Object.keys(changes).length > 0) {
      await this.users.update({ id }, changes);
    }
    return this.toResponse(await this.findOrFail(user.id));
  }
}
