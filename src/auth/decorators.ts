import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { AuthUser } from './auth-user.js';

export const IS_PUBLIC = Symbol('isPublic');
export const ADMIN_ONLY = Symbol('adminOnly');
export const TERMS_REQUIRED = Symbol('termsRequired');

/** The route needs no JWT (register, login, health, webhooks, the OAuth callback). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** The route answers ADMIN_REQUIRED to anyone but an admin. */
export const AdminOnly = (): MethodDecorator & ClassDecorator => SetMetadata(ADMIN_ONLY, true);

/**
 * The routes answer TERMS_NOT_ACCEPTED until the user has accepted the terms of service. Decided by
 * the route that matched, never by the request's path: Express matches paths case-insensitively (and
 * with encodings), so a path string check is easy to walk around.
 */
export const TermsRequired = (): MethodDecorator & ClassDecorator => SetMetadata(TERMS_REQUIRED, true);

/** The authenticated caller. */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthUser => {
  const req = ctx.switchToHttp().getRequest<{ user: AuthUser }>();
  return req.user;
});
