import type { JwtClaims } from './auth-user.js';

/** How many verified tokens one process remembers (a few hundred bytes each). */
export const VERIFIED_TOKENS_MAX = 10_000;

/** Claims that passed JwtStrategy's checks: every token the service signs expires. */
export type CheckedClaims = JwtClaims & { exp: number };

/**
 * The claims of tokens whose signature this process has already verified, keyed by the token's exact
 * text: the same string signed with the same secret verifies the same way every time, so a client
 * that sends its token again is not checked again (the HMAC and the decoding cost more than the rest
 * of an authenticated request's own work). Only the signature is remembered: the expiry is compared
 * on every hit, and the user, the token's revocation and the limits are checked on every request by
 * JwtStrategy.validate as before. Bounded: the oldest entries go beyond `max`. Nothing invalidates an
 * entry, because nothing can change what a signature proves; a new JWT_SECRET takes a restart, which
 * empties it.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, CheckedClaims>();

  constructor(
    private readonly max: number = VERIFIED_TOKENS_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The claims of `token` if it was verified here and has not expired (as jsonwebtoken compares:
   * whole seconds, expired at `exp`); an expired one is forgotten, so its next use is verified again
   * and answers as expired.
   */
  get(token: string): CheckedClaims | undefined {
    const claims = this.entries.get(token);
    if (claims !== undefined && Math.floor(this.now() / 1000) >= claims.exp) {
      this.entries.delete(token);
      return undefined;
    }
    return claims;
  }

  /** Remembers a token whose signature and claims were just checked. */
  add(token: string, claims: CheckedClaims): void {
    if (this.entries.has(token)) {
      return;
    }
    this.entries.set(token, claims);
    if (this.entries.size > this.max) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }
}
