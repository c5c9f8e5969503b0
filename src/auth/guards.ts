import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { AuthGuard } from '@nestjs/passport';
import { type ApiReply, mediaTypeOf } from '../common/http.js';
import type { ApiRequest } from '../common/http.js';
import { AppError } from '../common/app-error.js';
import { addressKey } from '../common/client-address.js';
import { requestLogFields } from '../common/correlation.js';
import {
  ApiRateLimits,
  consumeOrThrow,
  countsOnlyWhileStoreUp,
  RATE_LIMIT_EXEMPT,
  rateLimitExempt,
} from '../common/rate-limit.js';
import type { AuthUser, JwtClaims } from './auth-user.js';
import { COOKIE_SESSION, ConsoleSessions } from './console-session.js';
import { ADMIN_ONLY, IS_PUBLIC, TERMS_REQUIRED, TOKEN_ALSO_FROM, type TokenSources } from './decorators.js';
import {
  ALTERNATE_TOKEN,
  bearerToken,
  cookieValue,
  hasAuthorizationHeader,
  JwtStrategy,
  ROUTE_AUDIENCE,
} from './jwt.strategy.js';
import { AuthenticatedPrefetch, PREFETCH_ON_AUTH } from './prefetch.js';

/** Set by AuthenticationBeforeBody: the request's user is authenticated (and counted) already. */
const AUTHENTICATED_BEFORE_BODY = Symbol('authenticatedBeforeBody');

type GuardedRequest = ApiRequest & {
  user?: AuthUser;
  [RATE_LIMIT_EXEMPT]?: boolean;
  [ALTERNATE_TOKEN]?: string;
  [AUTHENTICATED_BEFORE_BODY]?: boolean;
  [COOKIE_SESSION]?: string;
};

function isPublic(reflector: Reflector, context: ExecutionContext): boolean {
  return reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]) === true;
}

/**
 * The per-address limit and JWT authentication (which includes the per-user limit, see JwtStrategy)
 * for every route, at the same time: the address counter, the signature check and the user's row and
 * counter are independent, so a request waits for one database round trip instead of three. When both
 * fail, the address limit answers, so floods of bad tokens stay RATE_LIMITED. Routes marked @Public()
 * skip authentication; routes marked @NoRateLimit() skip both counters; routes marked @PrefetchOnAuth()
 * start their reads during authentication.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: ApiRateLimits,
    private readonly prefetch: AuthenticatedPrefetch,
    private readonly strategy: JwtStrategy,
    private readonly consoleSessions: ConsoleSessions,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<GuardedRequest>();
    if (req[AUTHENTICATED_BEFORE_BODY] === true && req.user !== undefined) {
      // Both limits were counted and the token checked before the body was read (AuthenticationBeforeBody).
      return true;
    }
    const exempt = rateLimitExempt(this.reflector, context);
    req[RATE_LIMIT_EXEMPT] = exempt;
    const open = isPublic(this.reflector, context);
    this.takeAlternateToken(req, context, open);
    // The route's declared read-ahead, started by JwtStrategy once the token's signature is checked.
    this.prefetch.forRoute(req, this.reflector.get<symbol | undefined>(PREFETCH_ON_AUTH, context.getHandler()));
    let address = exempt
      ? Promise.resolve()
      : consumeOrThrow(this.limits.perIp, addressKey(req.ip), 'RATE_LIMITED', 'Too many requests from this address');
    if (!exempt && countsOnlyWhileStoreUp(this.reflector, context)) {
      // A counter that cannot be read (the database is down) lets the route answer; a spent one refuses.
      address = address.catch((err: unknown) => {
        if (err instanceof AppError) {
          throw err;
        }
      });
    }
    const authenticated = open ? Promise.resolve(true) : this.authenticate(req, context);
    const [limited, authentication] = await Promise.allSettled([address, authenticated]);
    if (limited.status === 'rejected') {
      throw limited.reason;
    }
    const sessionToken = req[COOKIE_SESSION];
    if (authentication.status === 'rejected') {
      if (sessionToken !== undefined && isEndedSession(authentication.reason)) {
        // The console's cookie holds a token the API no longer takes: the browser forgets it.
        this.consoleSessions.end(context.switchToHttp().getResponse<ApiReply>());
      }
      throw authentication.reason;
    }
    if (sessionToken !== undefined) {
      this.consoleSessions.checkCsrf(req, sessionToken);
    }
    return authentication.value;
  }

  /**
   * Passport's verdict, the same as AuthGuard's: `req.user` on success, else the error handleRequest
   * throws. A token this process has verified before takes the strategy's checks directly: passport
   * would only wrap them (a middleware, a strategy object and a promise per request).
   */
  private async authenticate(req: GuardedRequest, context: ExecutionContext): Promise<boolean> {
    const remembered = this.strategy.rememberedUser(req);
    if (remembered === undefined) {
      return super.canActivate(context) as Promise<boolean>;
    }
    // A failed check rejects with the error passport's path would throw too (handleRequest rethrows it).
    req.user = this.handleRequest(null, await remembered, undefined, context);
    return true;
  }

  /**
   * Without an Authorization header (which always wins): on routes marked @TokenAlsoFrom(), the
   * token of their cookie or form field (and the audience such a route also accepts); on every other
   * authenticated route, the console's session cookie (marked COOKIE_SESSION: a state change then
   * needs the CSRF token, see ConsoleSessions).
   */
  private takeAlternateToken(
    req: ApiRequest & { [ALTERNATE_TOKEN]?: string; [ROUTE_AUDIENCE]?: string; [COOKIE_SESSION]?: string },
    context: ExecutionContext,
    open: boolean,
  ): void {
    const sources = this.reflector.get<TokenSources | undefined>(TOKEN_ALSO_FROM, context.getHandler());
    if (sources?.audience !== undefined) {
      req[ROUTE_AUDIENCE] = sources.audience;
    }
    if (hasAuthorizationHeader(req)) {
      return;
    }
    if (sources === undefined) {
      const session = open ? undefined : this.consoleSessions.sessionToken(req);
      if (session !== undefined) {
        req[ALTERNATE_TOKEN] = session;
        req[COOKIE_SESSION] = session;
      }
      return;
    }
    const fromForm =
      sources.formField !== undefined && mediaTypeOf(req) === 'application/x-www-form-urlencoded'
        ? (req.body as Record<string, unknown> | undefined)?.[sources.formField]
        : undefined;
    const token = typeof fromForm === 'string' ? fromForm.trim() : sources.cookie && cookieValue(req, sources.cookie);
    if (typeof token === 'string' && token !== '') {
      req[ALTERNATE_TOKEN] = token;
    }
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

/** The answers that mean the token itself is done for (not a limit, not a failure of the service). */
function isEndedSession(err: unknown): boolean {
  return err instanceof AppError && ['TOKEN_EXPIRED', 'TOKEN_REVOKED', 'INVALID_TOKEN'].includes(err.code);
}

/**
 * Passport's verdict on a request's JWT: the user, or the error the API answers (TOKEN_EXPIRED,
 * UNAUTHORIZED without any token, else INVALID_TOKEN). Shared by every guard that authenticates a JWT.
 */
export function authenticatedOrThrow<TUser>(
  err: unknown,
  user: TUser | false,
  info: unknown,
  req: ApiRequest & { [ALTERNATE_TOKEN]?: string },
): TUser {
  if (err) {
    throw err;
  }
  if (user) {
    // From here on, the request's log lines (and its access log line) name the user.
    requestLogFields(req).userId = (user as unknown as AuthUser).user.id;
    return user;
  }
  if (info instanceof Error && info.name === 'TokenExpiredError') {
    throw new AppError('TOKEN_EXPIRED', 'The token has expired; log in again');
  }
  if (!hasAuthorizationHeader(req) && req[ALTERNATE_TOKEN] === undefined) {
    throw new AppError('UNAUTHORIZED', 'Authentication required: send Authorization: Bearer <token>');
  }
  throw new AppError('INVALID_TOKEN', 'The token is malformed or its signature is invalid');
}

/** TERMS_NOT_ACCEPTED on routes marked @TermsRequired() until POST /api/auth/accept-terms. */
@Injectable()
export class TermsGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (isPublic(this.reflector, context)) {
      return true;
    }
    const gated = this.reflector.getAllAndOverride<boolean>(TERMS_REQUIRED, [context.getHandler(), context.getClass()]);
    const req = context.switchToHttp().getRequest<{ user?: AuthUser }>();
    if (gated === true && req.user !== undefined && req.user.user.acceptedTermsAt === null) {
      throw new AppError('TERMS_NOT_ACCEPTED', 'Accept the terms of service first: POST /api/auth/accept-terms');
    }
    return true;
  }
}

/** ADMIN_REQUIRED on routes marked @AdminOnly(). */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const adminOnly = this.reflector.getAllAndOverride<boolean>(ADMIN_ONLY, [context.getHandler(), context.getClass()]);
    if (adminOnly !== true) {
      return true;
    }
    const req = context.switchToHttp().getRequest<{ user?: AuthUser }>();
    if (req.user?.isAdmin !== true) {
      throw new AppError('ADMIN_REQUIRED', 'This endpoint is for administrators');
    }
    return true;
  }
}

/**
 * JwtAuthGuard's work done before the request's body is read, for the routes with a large body limit
 * (the Temporal codec's payload routes, admins only): the per-address limit, the JWT with the user's
 * row, revocation and per-user limit, and the admin role, so that nobody else makes the API parse a
 * large body. Same answers as the guards; JwtAuthGuard then takes the request as it is.
 */
@Injectable()
export class AuthenticationBeforeBody {
  constructor(
    private readonly limits: ApiRateLimits,
    private readonly strategy: JwtStrategy,
    private readonly jwt: JwtService,
  ) {}

  /** Resolves when the caller is an admin within the limits; rejects with the answer otherwise. */
  async admin(req: ApiRequest, sources: Pick<TokenSources, 'cookie' | 'audience'>): Promise<void> {
    const guarded = req as GuardedRequest & { [ROUTE_AUDIENCE]?: string };
    if (sources.audience !== undefined) {
      guarded[ROUTE_AUDIENCE] = sources.audience;
    }
    if (sources.cookie !== undefined && !hasAuthorizationHeader(req)) {
      const token = cookieValue(req, sources.cookie);
      if (token !== undefined && token !== '') {
        guarded[ALTERNATE_TOKEN] = token;
      }
    }
    const address = consumeOrThrow(
      this.limits.perIp,
      addressKey(req.ip),
      'RATE_LIMITED',
      'Too many requests from this address',
    );
    const [limited, authentication] = await Promise.allSettled([address, this.authenticate(guarded)]);
    if (limited.status === 'rejected') {
      throw limited.reason;
    }
    if (authentication.status === 'rejected') {
      throw authentication.reason;
    }
    if (!authentication.value.isAdmin) {
      throw new AppError('ADMIN_REQUIRED', 'This endpoint is for administrators');
    }
    guarded.user = authentication.value;
    guarded[AUTHENTICATED_BEFORE_BODY] = true;
  }

  /** The strategy's checks, with the signature verified here instead of by passport. */
  private async authenticate(req: GuardedRequest): Promise<AuthUser> {
    const remembered = this.strategy.rememberedUser(req);
    if (remembered !== undefined) {
      return authenticatedOrThrow(null, await remembered, undefined, req);
    }
    const token = bearerToken(req) ?? req[ALTERNATE_TOKEN] ?? null;
    if (token === null) {
      return authenticatedOrThrow<AuthUser>(null, false, undefined, req);
    }
    let claims: JwtClaims;
    try {
      claims = await this.jwt.verifyAsync<JwtClaims>(token);
    } catch (err) {
      return authenticatedOrThrow<AuthUser>(null, false, err, req);
    }
    return authenticatedOrThrow(null, await this.strategy.validate(req, claims), undefined, req);
  }
}
