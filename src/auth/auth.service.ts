import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, QueryFailedError, type Repository } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { UserEntity } from '../users/user.entity.js';
import { type UserResponse, UsersService } from '../users/users.service.js';
import type { AuthUser, JwtClaims } from './auth-user.js';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './password.js';
import { RevokedTokenEntity } from './revoked-token.entity.js';

/** Credits a new account starts with (the free tier's allowance). */
export const SIGNUP_CREDITS = 100;

export interface SessionAnswer {
  user: UserResponse;
  accessToken: string;
  expiresIn: number;
}

@Injectable()
export class AuthService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    @InjectRepository(RevokedTokenEntity) private readonly revoked: Repository<RevokedTokenEntity>,
    private readonly jwt: JwtService,
    private readonly usersService: UsersService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async register(input: { email: string; password: string; name?: string }): Promise<SessionAnswer> {
    const email = input.email.trim().toLowerCase();
    const passwordHash = await hashPassword(input.password);
    let user: UserEntity;
    try {
      user = await this.users.save(
        this.users.create({
          email,
          name: input.name ?? null,
          passwordHash,
          role: this.settings.adminEmails.includes(email) ? 'admin' : 'user',
          credits: SIGNUP_CREDITS,
        }),
      );
    } catch (err) {
      if (err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23505') {
        throw AppError.validation([{ field: 'email', message: 'email is already registered' }]);
      }
      throw err;
    }
    return this.issue(user);
  }

  async login(input: { email: string; password: string }): Promise<SessionAnswer> {
    const user = await this.users.findOneBy({ email: input.email.trim().toLowerCase() });
    const ok = await verifyPassword(input.password, user?.passwordHash ?? (await DUMMY_HASH_PROMISE));
    if (user === null || !ok) {
      throw new AppError('UNAUTHORIZED', 'Email or password is wrong');
    }
    return this.issue(user);
  }

  async logout(auth: AuthUser): Promise<void> {
    await this.revoked.upsert(
      { jti: auth.token.jti, userId: auth.user.id, expiresAt: auth.token.expiresAt },
      { conflictPaths: ['jti'] },
    );
    // Keep the table small: rows of tokens that expired anyway are no longer needed.
    await this.revoked.delete({ expiresAt: LessThan(new Date()) });
  }

  async logoutAll(auth: AuthUser): Promise<void> {
    await this.users.update({ id: auth.user.id }, { tokensValidAfter: new Date() });
  }

  async acceptTerms(auth: AuthUser, version: string | undefined): Promise<{ acceptedTermsAt: string }> {
    const acceptedTermsAt = new Date();
    await this.users.update({ id: auth.user.id }, { acceptedTermsAt, acceptedTermsVersion: version ?? null });
    return { acceptedTermsAt: acceptedTermsAt.toISOString() };
  }

  private async issue(user: UserEntity): Promise<SessionAnswer> {
    const claims: JwtClaims = { sub: user.id, jti: randomUUID(), iatMs: Date.now() };
    const accessToken = await this.jwt.signAsync(claims);
    return { user: this.usersService.toResponse(user), accessToken, expiresIn: this.settings.jwtTtlSeconds };
  }
}
