import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** r and p of OWASP's recommendation; N comes from PASSWORD_SCRYPT_N (2^17 by default). */
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** The largest stored parameters verified: a damaged row must not make us allocate gigabytes. */
const MAX_STORED_N = 2 ** 20;
const MAX_STORED_R = 32;
const MAX_STORED_P = 16;

export function scryptParams(n: number): ScryptParams {
  return { N: n, r: SCRYPT_R, p: SCRYPT_P };
}

function scrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  // scrypt needs 128·N·r bytes for its table plus 128·r·p for its blocks; twice the table covers both.
  const maxmem = 2 * 128 * params.N * params.r + 128 * params.r * params.p;
  return new Promise((resolve, reject) => {
    scryptCb(password.normalize('NFKC'), salt, KEY_BYTES, { ...params, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url parts), so the cost can change later. */
export async function hashPassword(password: string, params: ScryptParams): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** The parameters of a stored hash, or undefined when it is not one of ours (or out of bounds). */
export function storedParams(stored: string): ScryptParams | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt' || !parts.slice(1, 4).every((part) => /^\d{1,8}$/.test(part))) {
    return undefined;
  }
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const powerOfTwo = N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_STORED_N || r < 1 || r > MAX_STORED_R || p < 1 || p > MAX_STORED_P) {
    return undefined;
  }
  return { N, r, p };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const params = storedParams(stored);
  if (params === undefined) {
    return false;
  }
  const [, , , , salt, hash] = stored.split('$') as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a stored hash is cheaper than `target` (it is then re-hashed at the next successful login). */
export function isWeaker(stored: string, target: ScryptParams): boolean {
  const params = storedParams(stored);
  return params !== undefined && (params.N < target.N || params.r < target.r || params.p < target.p);
}

/**
 * At most `concurrency` tasks at once, at most `queueLimit` more waiting; past that, RATE_LIMITED at
 * once. A hash holds a libuv thread and N·r·128 bytes for its whole run: a flood of logins must not
 * queue without bound (every waiter holds a socket and answers late anyway) nor take every libuv
 * thread (DNS lookups and file reads share that pool).
 */
export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly concurrency: number,
    readonly queueLimit: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queueLimit) {
        throw new AppError('RATE_LIMITED', 'The service is busy checking passwords; try again shortly', undefined, 1);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) {
        next(); // the slot passes straight to the next waiter
      } else {
        this.running -= 1;
      }
    }
  }

  get busy(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

/** Password hashing with the configured cost, through a bounded number of concurrent hashes. */
@Injectable()
export class PasswordHasher {
  readonly params: ScryptParams;
  private readonly slots: Slots;
  private dummy: Promise<string> | undefined;

  constructor(@Inject(SETTINGS) settings: Settings) {
    this.params = scryptParams(settings.passwordScryptN);
    this.slots = new Slots(settings.passwordHashConcurrency, settings.passwordHashQueue);
  }

  hash(password: string): Promise<string> {
    return this.slots.run(() => hashPassword(password, this.params));
  }

  /**
   * Checks a password against a stored hash; with no stored hash (unknown email), against a hash of a
   * random password of the current cost, so both take the same time (no user enumeration).
   */
  verify(password: string, stored: string | null): Promise<boolean> {
    return this.slots.run(async () => {
      if (stored !== null) {
        return verifyPassword(password, stored);
      }
      this.dummy ??= hashPassword(randomBytes(16).toString('hex'), this.params);
      await verifyPassword(password, await this.dummy);
      return false;
    });
  }

  needsRehash(stored: string): boolean {
    return isWeaker(stored, this.params);
  }
}
