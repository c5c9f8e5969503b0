import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { AuthUser } from './auth-user.js';

export const IS_PUBLIC = Symbol('isPublic');
export const ADMIN_ONLY = Symbol('adminOnly');
export const TERMS_REQUIRED = Symbol('termsRequired');
export const TOKEN_ALSO_FROM = Symbol('tokenAlsoFrom');

/** Where, besides `Authorization: Bearer`, a route takes the caller's access token. */
export interface TokenSources {
  /** A cookie of this name (sent by a browser page that cannot set headers, e.g. the Temporal UI). */
  cookie?: string;
  /** A field of this name in a form-encoded body (a sign-in form). */
  formField?: string;
  /**
   * The route also takes tokens minted for this audience (`aud`), which every other route refuses;
   * the cookie's token must then be one of them (a full access token is taken only as Bearer).
   */
  audience?: string;
}

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

/**
 * The route also takes the access token from a cookie or a form field, when the request has no
 * Authorization header (which always wins), instead of the console's session cookie. Every other
 * authenticated route takes only the console's session cookie, and a request that changes state by
 * it must prove it comes from the console with its CSRF token (src/auth/console-session.ts).
 */
export const TokenAlsoFrom = (sources: TokenSources): MethodDecorator & ClassDecorator =>
  SetMetadata(TOKEN_ALSO_FROM, sources);

/** The authenticated caller. */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthUser => {
  const req = ctx.switchToHttp().getRequest<{ user: AuthUser }>();
  return req.user;
});
