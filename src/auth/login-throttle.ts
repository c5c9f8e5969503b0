import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type RateLimiterPostgres } from 'rate-limiter-flexible';
import { type DataSource } from 'typeorm';
import { addressKey } from '../common/client-address.js';
import { consumeOrThrow, postgresLimiter } from '../common/rate-limit.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';

/**
 * The limits of login and registration, on top of the API's per-address limit: sign-in attempts per
 * client address, and failed logins per account from any address. An attempt takes its account's
 * point before its password is checked (so parallel guesses cannot overrun the count) and a success
 * gives the account its points back; what remains counted is failures. Once an account's points are
 * spent, every login to it answers RATE_LIMITED until its window ends: a guesser gets at most
 * LOGIN_FAILURES_PER_ACCOUNT guesses per window whatever its addresses, and the lockout ends by
 * itself (OWASP's throttling, not a lockout an operator must lift). Registrations have a daily cap
 * per address on top (REGISTRATIONS_PER_ADDRESS_PER_DAY), so sign-up credits cannot be farmed.
 * Addresses are counted as addressKey says: IPv4 as is, IPv6 by its /64.
 */
@Injectable()
export class LoginThrottle {
  private readonly perAddress: RateLimiterPostgres;
  private readonly perAccount: RateLimiterPostgres;
  private readonly registrationsPerAddress: RateLimiterPostgres;

  constructor(@InjectDataSource() dataSource: DataSource, @Inject(SETTINGS) settings: Settings) {
    this.perAddress = postgresLimiter(
      dataSource,
      'auth-ip',
      settings.authAttemptsPerIp,
      settings.authAttemptsWindowSeconds,
    );
    this.perAccount = postgresLimiter(
      dataSource,
      'auth-account',
      settings.loginFailuresPerAccount,
      settings.loginFailureWindowSeconds,
    );
    this.registrationsPerAddress = postgresLimiter(
      dataSource,
      'register-ip',
      settings.registrationsPerAddressPerDay,
      REGISTRATION_WINDOW_SECONDS,
    );
  }

  /** Counts an attempt of this address on this (normalized) email; RATE_LIMITED when either is spent. */
  async attempt(address: string, email: string): Promise<void> {
    // The address first: a blocked address must not spend the points of the accounts it names.
    await consumeOrThrow(
      this.perAddress,
      addressKey(address),
      'RATE_LIMITED',
      'Too many sign-in attempts from this address',
    );
    await consumeOrThrow(
      this.perAccount,
      accountKey(email),
      'RATE_LIMITED',
      'Too many failed sign-ins for this account; try again later',
    );
  }

  /**
   * Takes one of the address's registrations of the day, before the account is made (parallel
   * registrations cannot overrun the cap); RATE_LIMITED once they are spent. registrationFailed gives
   * it back when no account was made after all.
   */
  async registration(address: string): Promise<void> {
    await consumeOrThrow(
      this.registrationsPerAddress,
      addressKey(address),
      'RATE_LIMITED',
      'Too many accounts registered from this address today; try again later',
    );
  }

  async registrationFailed(address: string): Promise<void> {
    await this.registrationsPerAddress.reward(addressKey(address), 1);
  }

  /** The attempt succeeded: the account's earlier failures no longer count. */
  async succeeded(email: string): Promise<void> {
    await this.perAccount.delete(accountKey(email));
  }
}

/** The window of REGISTRATIONS_PER_ADDRESS_PER_DAY: a day from the address's first registration. */
const REGISTRATION_WINDOW_SECONDS = 24 * 3600;

/** Counters are keyed by a digest, so the rate limit table holds no email addresses. */
function accountKey(email: string): string {
  return createHash('sha256').update(email).digest('base64url');
}
