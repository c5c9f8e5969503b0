import { createHmac, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type AnyRequest, type AnyResponse, rawResponse } from '../common/http.js';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { cookieValue } from './jwt.strategy.js';

/** The console's access token: HttpOnly, SameSite=Strict, sent to the API's paths only. */
export const SESSION_COOKIE = 'agentsite_session';
/** The console's CSRF token: readable by the console's script, which echoes it in CSRF_HEADER. */
export const CSRF_COOKIE = 'agentsite_csrf';
/** The header a cookie-authenticated request that changes state must carry (lower case, as Node reads it). */
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_HEADER_NAME = 'X-CSRF-Token';
const SESSION_PATH = '/api';

/** Methods that change nothing: a cookie-authenticated request with one of them needs no CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What JwtAuthGuard marks on a request it authenticates by the console's session cookie. */
export const COOKIE_SESSION = Symbol('cookieSession');

/**
 * The console's session by cookie (the API's other clients send Authorization: Bearer, which always
 * wins and needs none of this). Signing in from the console sets two cookies: the access token,
 * HttpOnly (no script reads it), and a CSRF token derived from it (an HMAC under a key derived from
 * JWT_SECRET), which the console's script reads and sends back as X-CSRF-Token on every request that
 * changes state. Both are SameSite=Strict, and Secure when PUBLIC_BASE_URL is https (so the dev
 * server on http://localhost still works). A page of another site can make the browser send the
 * cookies but cannot read the CSRF cookie, and the expected value is bound to the session's token:
 * a CSRF cookie planted by a sibling host does not match.
 */
@Injectable()
export class ConsoleSessions {
  private readonly csrfKey: Buffer;
  private readonly secure: boolean;

  constructor(@Inject(SETTINGS) settings: Settings) {
    this.csrfKey = createHmac('sha256', settings.jwtSecret).update('agentsite console csrf v1').digest();
    this.secure = settings.publicBaseUrl.startsWith('https:');
  }

  /** The CSRF token that goes with an access token. */
  csrfToken(accessToken: string): string {
    return createHmac('sha256', this.csrfKey).update(accessToken).digest('base64url');
  }

  /** Sets the two cookies of a console session, for as long as the token lives. */
  start(res: AnyResponse, accessToken: string, maxAgeSeconds: number): void {
    const maxAge = Math.max(0, Math.floor(maxAgeSeconds));
    appendCookies(res, [
      this.cookie(SESSION_COOKIE, accessToken, maxAge, SESSION_PATH, true),
      this.cookie(CSRF_COOKIE, this.csrfToken(accessToken), maxAge, '/', false),
    ]);
  }

  /** Removes both cookies (sign-out, or a session token the API no longer accepts). */
  end(res: AnyResponse): void {
    appendCookies(res, [
      this.cookie(SESSION_COOKIE, '', 0, SESSION_PATH, true),
      this.cookie(CSRF_COOKIE, '', 0, '/', false),
    ]);
  }

  /** The console's session token sent with the request, if any. */
  sessionToken(req: AnyRequest): string | undefined {
    const token = cookieValue(req, SESSION_COOKIE);
    return token === undefined || token === '' ? undefined : token;
  }

  /**
   * PERMISSION_DENIED for a request authenticated by the session cookie that may change state
   * (anything but GET, HEAD, OPTIONS) without the session's CSRF token in X-CSRF-Token. Compared in
   * constant time.
   */
  checkCsrf(req: AnyRequest, accessToken: string): void {
    if (SAFE_METHODS.has((req.method ?? 'GET').toUpperCase())) {
      return;
    }
    const sent = req.headers[CSRF_HEADER];
    const expected = Buffer.from(this.csrfToken(accessToken), 'utf8');
    const given = Buffer.from(typeof sent === 'string' ? sent.trim() : '', 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError(
        'PERMISSION_DENIED',
        `A request signed in by the console's cookie must carry its CSRF token in ${CSRF_HEADER_NAME} (or send Authorization: Bearer)`,
      );
    }
  }

  private cookie(name: string, value: string, maxAge: number, path: string, httpOnly: boolean): string {
    return [
      `${name}=${value}`,
      `Max-Age=${maxAge}`,
      `Path=${path}`,
      ...(httpOnly ? ['HttpOnly'] : []),
      'SameSite=Strict',
      ...(this.secure ? ['Secure'] : []),
    ].join('; ');
  }
}

/** Adds Set-Cookie headers to the answer (after any it has). */
function appendCookies(res: AnyResponse, cookies: string[]): void {
  const raw = rawResponse(res);
  if (raw !== res) {
    for (const cookie of cookies) {
      // Fastify keeps every Set-Cookie value given to it.
      void (res as Exclude<AnyResponse, typeof raw>).header('set-cookie', cookie);
    }
    return;
  }
  const current = raw.getHeader('set-cookie');
  const before = current === undefined ? [] : Array.isArray(current) ? current : [String(current)];
  raw.setHeader('set-cookie', [...before, ...cookies]);
}
