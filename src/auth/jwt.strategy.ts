import { createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { type DataSource } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { UserEntity } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import type { AuthUser, JwtClaims } from './auth-user.js';
import { UUID } from '../common/ids.js';

/** Verifies the signature and expiry (passport-jwt), then checks the user and revocation in one query. */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(SETTINGS) settings: Settings,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly usersService: UsersService,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // A KeyObject: given a string, jsonwebtoken first tries (and fails) to parse it as a public
      // key on every verification, which the profile showed as the costliest step of a request.
      secretOrKey: createSecretKey(Buffer.from(settings.jwtSecret, 'utf8')) as unknown as string,
      algorithms: ['HS256'],
      ignoreExpiration: false,
      passReqToCallback: false,
    });
  }

  async validate(claims: JwtClaims): Promise<AuthUser> {
    if (
      typeof claims.sub !== 'string' ||
      !UUID.test(claims.sub) ||
      typeof claims.jti !== 'string' ||
      !UUID.test(claims.jti) ||
      typeof claims.iatMs !== 'number' ||
      typeof claims.exp !== 'number'
    ) {
      throw new AppError('INVALID_TOKEN', 'Token claims are malformed');
    }
    // One round trip: the user, and whether this token was revoked.
    const found = await this.dataSource
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .addSelect('EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = :jti)', 'revoked')
      .where('u.id = :id', { id: claims.sub, jti: claims.jti })
      .getRawAndEntities();
    const user = found.entities[0] ?? null;
    const rows = found.raw as Array<{ revoked: boolean }>;
    if (user === null) {
      throw new AppError('INVALID_TOKEN', 'The token belongs to no user');
    }
    if (rows[0]?.revoked || (user.tokensValidAfter !== null && claims.iatMs < user.tokensValidAfter.getTime())) {
      throw new AppError('TOKEN_REVOKED', 'This token was revoked; log in again');
    }
    return {
      user,
      isAdmin: this.usersService.isAdmin(user),
      token: { jti: claims.jti, expiresAt: new Date(claims.exp * 1000) },
    };
  }
}

/** Whether the request carries an Authorization header at all (missing vs malformed). */
export function hasAuthorizationHeader(req: Request): boolean {
  const header = req.headers.authorization;
  return typeof header === 'string' && header.trim() !== '';
}
