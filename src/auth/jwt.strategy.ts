import { createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { AnyRequest } from '../common/http.js';
import { Strategy } from 'passport-jwt';
import { AuthenticatedPrefetch } from './prefetch.js';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { UsersService } from '../users/users.service.js';
import type { AuthUser, JwtClaims } from './auth-user.js';
import { AuthRepository } from './auth.repository.js';
import { UUID } from '../common/ids.js';
import { ApiRateLimits, consumeOrThrow, RATE_LIMIT_EXEMPT } from '../common/rate-limit.js';
import { type CheckedClaims, VerifiedTokens } from './verified-tokens.js';

/**
 * Verifies the signature and expiry (passport-jwt), then, at the same time, reads the user with the
 * token's revocation (one query) and counts the request against the user's limit (the signature is
 * already checked, so nobody can spend another user's requests). A token this process has verified
 * before skips the signature check (VerifiedTokens), never the rest.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly verified = new VerifiedTokens();

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly authRows: AuthRepository,
    private readonly usersService: UsersService,
    private readonly limits: ApiRateLimits,
    private readonly prefetch: AuthenticatedPrefetch,
  ) {
    super({
      jwtFromRequest: requestToken,
      // A KeyObject: given a string, jsonwebtoken first tries (and fails) to parse it as a public
      // key on every verification, which the profile showed as the costliest step of a request.
      secretOrKey: createSecretKey(Buffer.from(settings.jwtSecret, 'utf8')) as unknown as string,
      algorithms: ['HS256'],
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  /**
   * Passport's entry (this is the request's copy of the strategy, with success and error): a token
   * verified before goes straight to validate(), any other through passport-jwt's verification,
   * which calls validate() when the signature and expiry hold.
   */
  override authenticate(req: AnyRequest, options?: unknown): void {
    const remembered = this.rememberedUser(req);
    if (remembered === undefined) {
      // Passport's strategy reads the request's headers only (declared on Express's type).
      super.authenticate(req as never, options);
      return;
    }
    remembered.then(
      (user) => this.success(user),
      (err: unknown) => this.error(err as Error),
    );
  }

  /**
   * For a token this process verified before: the checks every request makes (user, revocation,
   * limit), without passport's per-request machinery. Undefined when the token is not remembered:
   * it must go through authenticate() and have its signature checked.
   */
  rememberedUser(req: AnyRequest): Promise<AuthUser> | undefined {
    const token = requestToken(req);
    const claims = token === null ? undefined : this.verified.get(token);
    return claims === undefined ? undefined : this.checked(req, claims);
  }

  /** Called by passport-jwt with the claims of a token whose signature and expiry it verified. */
  async validate(req: AnyRequest & { [RATE_LIMIT_EXEMPT]?: boolean }, claims: JwtClaims): Promise<AuthUser> {
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
    const token = requestToken(req);
    if (token !== null) {
      this.verified.add(token, claims as CheckedClaims);
    }
    return this.checked(req, claims as CheckedClaims);
  }

  /** What every request checks, verified token or not: the user, the token's revocation, the limit. */
  private async checked(
    req: AnyRequest & { [RATE_LIMIT_EXEMPT]?: boolean; [ROUTE_AUDIENCE]?: string },
    claims: CheckedClaims,
  ): Promise<AuthUser> {
    checkAudience(req, claims);
    this.prefetch.start(req, claims.sub);
    const counted =
      req[RATE_LIMIT_EXEMPT] === true
        ? Promise.resolve()
        : consumeOrThrow(this.limits.perUser, claims.sub, 'RATE_LIMITED', 'Too many requests for this user');
    const [found, limit] = await Promise.allSettled([this.authRows.tokenUser(claims.sub, claims.jti), counted]);
    // An invalid or revoked token answers as such even when its user is over the limit.
    if (found.status === 'rejected') {
      throw found.reason;
    }
    const { user, revoked } = found.value;
    if (user === null) {
      throw new AppError('INVALID_TOKEN', 'The token belongs to no user');
    }
    if (revoked || (user.tokensValidAfter !== null && claims.iatMs < user.tokensValidAfter.getTime())) {
      throw new AppError('TOKEN_REVOKED', 'This token was revoked; log in again');
    }
    if (limit.status === 'rejected') {
      throw limit.reason;
    }
    return {
      user,
      isAdmin: this.usersService.isAdmin(user),
      token: { jti: claims.jti, expiresAt: new Date(claims.exp * 1000) },
    };
  }
}

/**
 * RFC 6750 section 2.1: the `Bearer` scheme (in any case, RFC 9110), spaces, one b64token and nothing
 * after it. passport-jwt's own extractor reads only the first two words, so `Bearer <token> <more>`
 * passed as if the rest were not there; anything but exactly one token is INVALID_TOKEN.
 */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The bearer token of the request, or null when the header is missing or not exactly `Bearer <token>`. */
export function bearerToken(req: AnyRequest): string | null {
  const header = req.headers.authorization;
  return (typeof header === 'string' ? BEARER.exec(header.trim())?.[1] : undefined) ?? null;
}

/** The audience a route marked @TokenAlsoFrom({ audience }) also accepts (set by JwtAuthGuard). */
export const ROUTE_AUDIENCE = Symbol('routeAudience');

/**
 * A token minted for an audience (the codec cookie's) is accepted only by the routes that name it,
 * and those routes take a cookie's token only when it is one: anything else is INVALID_TOKEN.
 */
function checkAudience(req: AnyRequest & { [ROUTE_AUDIENCE]?: string }, claims: CheckedClaims): void {
  const audience = req[ROUTE_AUDIENCE];
  if (claims.aud !== undefined && claims.aud !== audience) {
    throw new AppError('INVALID_TOKEN', 'This token is not accepted here: it was issued for another use');
  }
  if (audience !== undefined && claims.aud !== audience && bearerToken(req) === null) {
    throw new AppError('INVALID_TOKEN', 'This cookie does not hold a token issued for this use; sign in again');
  }
}

/** The token JwtAuthGuard took from a cookie or form field of a route marked @TokenAlsoFrom(). */
export const ALTERNATE_TOKEN = Symbol('alternateToken');

/** The token a request authenticates with: its bearer token, else the one JwtAuthGuard took elsewhere. */
function requestToken(req: AnyRequest): string | null {
  return bearerToken(req) ?? alternateToken(req);
}

function alternateToken(req: AnyRequest & { [ALTERNATE_TOKEN]?: string }): string | null {
  return req[ALTERNATE_TOKEN] ?? null;
}

/** The value of a cookie of the request (RFC 6265 `name=value; ...`), or undefined. */
export function cookieValue(req: AnyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') {
    return undefined;
  }
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      return part.slice(eq + 1).trim();
    }
  }
  return undefined;
}

/** Whether the request carries an Authorization header at all (missing vs malformed). */
export function hasAuthorizationHeader(req: AnyRequest): boolean {
  const header = req.headers.authorization;
  return typeof header === 'string' && header.trim() !== '';
}
