import { createHash, timingSafeEqual } from 'node:crypto';
import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { ApiRequest } from '../common/http.js';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import type { AuthUser } from './auth-user.js';
import { authenticatedOrThrow } from './guards.js';
import { bearerToken } from './jwt.strategy.js';

/** Compares two secrets in constant time whatever their lengths (their digests are compared). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Operators' routes (the metrics): `Authorization: Bearer` with either the scrapers' METRICS_TOKEN (a
 * long-lived credential for Prometheus, which cannot log in and renew an hour-long JWT) or an admin's
 * access token. Put on a @Public() route, so the global JWT guard lets the static token through (it
 * still counts the per-address limit); this guard then authenticates a JWT itself: UNAUTHORIZED,
 * INVALID_TOKEN, TOKEN_EXPIRED, TOKEN_REVOKED as everywhere, ADMIN_REQUIRED for a user's token.
 */
@Injectable()
export class OperatorGuard extends AuthGuard('jwt') {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ApiRequest & { user?: AuthUser }>();
    const token = bearerToken(req);
    const scraperToken = this.settings.metricsToken;
    if (token !== null && scraperToken !== undefined && sameSecret(token, scraperToken)) {
      return true;
    }
    await (super.canActivate(context) as Promise<boolean>);
    if (req.user?.isAdmin !== true) {
      throw new AppError('ADMIN_REQUIRED', 'This endpoint is for operators: an admin token or METRICS_TOKEN');
    }
    return true;
  }

  override handleRequest<TUser = AuthUser>(
    err: unknown,
    user: TUser | false,
    info: unknown,
    context: ExecutionContext,
  ): TUser {
    return authenticatedOrThrow(err, user, info, context.switchToHttp().getRequest<ApiRequest>());
  }
}
