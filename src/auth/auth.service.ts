import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { QueryFailedError } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import type { UserEntity } from '../users/user.entity.js';
import { normalizeEmail } from '../users/user-fields.js';
import { type UserResponse, UsersService } from '../users/users.service.js';
import type { AuthUser, JwtClaims } from './auth-user.js';
import { LoginThrottle } from './login-throttle.js';
import { PasswordHasher } from './password.js';
import { AuthRepository } from './auth.repository.js';

export interface SessionAnswer {
  user: UserResponse;
  accessToken: string;
  expiresIn: number;
}

@Injectable()
export class AuthService {
  private readonly logger = new Logger('Auth');

  constructor(
    private readonly authRows: AuthRepository,
    private readonly jwt: JwtService,
    private readonly usersService: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly throttle: LoginThrottle,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** `address` is the client's address (req.ip, as TRUST_PROXY defines it), for the sign-in limits. */
  async register(input: { email: string; password: string; name?: string }, address: string): Promise<SessionAnswer> {
    const email = normalizeEmail(input.email);
    await this.throttle.attempt(address, email);
    // A taken address is answered before hashing: a duplicate costs no scrypt (the unique index
    // still decides a race).
    if (await this.usersService.isEmailTaken(email)) {
      throw alreadyRegistered();
    }
    // The address's daily cap, after the checks that answer a mistake (a taken email costs none of it).
    await this.throttle.registration(address);
    let user: UserEntity;
    try {
      const passwordHash = await this.hasher.hash(input.password);
      // Never an admin from a registration form: admins are made by an operator (npm run admin).
      // The credits to start with are the operator's choice (SIGNUP_CREDITS; 0: granted by an admin).
      user = await this.usersService.register({
        email,
        name: input.name ?? null,
        passwordHash,
        role: 'user',
        credits: this.settings.signupCredits,
      });
    } catch (err) {
      // No account was made: the registration of the day is given back.
      await this.throttle.registrationFailed(address).catch((refund: unknown) => {
        this.logger.warn(`registration not given back to its address: ${(refund as Error).message}`);
      });
      if (err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23505') {
        throw alreadyRegistered();
      }
      throw err;
    }
    await this.throttle.succeeded(email);
    return this.issue(user);
  }

  async login(input: { email: string; password: string }, address: string): Promise<SessionAnswer> {
    const email = normalizeEmail(input.email);
    await this.throttle.attempt(address, email);
    const user = await this.usersService.findByEmail(email);
    const ok = await this.hasher.verify(input.password, user?.passwordHash ?? null);
    if (user === null || !ok) {
      throw new AppError('UNAUTHORIZED', 'Email or password is wrong');
    }
    await this.throttle.succeeded(email);
    await this.upgradeHash(user, input.password);
    return this.issue(user);
  }

  /**
   * A hash made with cheaper parameters than today's is replaced while the password is at hand (the
   * only moment it is). Best effort: the login succeeds either way, and a hash changed meanwhile
   * (another login's upgrade) is left as it is.
   */
  private async upgradeHash(user: UserEntity, password: string): Promise<void> {
    if (!this.hasher.needsRehash(user.passwordHash)) {
      return;
    }
    try {
      const passwordHash = await this.hasher.hash(password);
      await this.usersService.replacePasswordHash(user, passwordHash);
    } catch (err) {
      this.logger.warn(`password hash of user ${user.id} not upgraded: ${(err as Error).message}`);
    }
  }

  async logout(auth: AuthUser): Promise<void> {
    await this.authRows.revoke({ jti: auth.token.jti, userId: auth.user.id, expiresAt: auth.token.expiresAt });
    // Keep the table small: rows of tokens that expired anyway are no longer needed.
    await this.authRows.purgeExpiredRevocations();
  }

  async logoutAll(auth: AuthUser): Promise<void> {
    await this.usersService.updateAccount(auth.user.id, { tokensValidAfter: new Date() });
  }

  async acceptTerms(auth: AuthUser, version: string | undefined): Promise<{ acceptedTermsAt: string }> {
    const acceptedTermsAt = new Date();
    await this.usersService.updateAccount(auth.user.id, { acceptedTermsAt, acceptedTermsVersion: version ?? null });
    return { acceptedTermsAt: acceptedTermsAt.toISOString() };
  }

  private async issue(user: UserEntity): Promise<SessionAnswer> {
    const claims: JwtClaims = { sub: user.id, jti: randomUUID(), iatMs: Date.now() };
    const accessToken = await this.jwt.signAsync(claims);
    return { user: this.usersService.toResponse(user), accessToken, expiresIn: this.settings.jwtTtlSeconds };
  }
}

function alreadyRegistered(): AppError {
  return AppError.validation([{ field: 'email', message: 'email is already registered' }]);
}
