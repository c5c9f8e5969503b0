import { describe, expect, it } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import { loadSettings, OWASP_SCRYPT_N } from '../config/settings.js';
import {
  hashPassword,
  isWeaker,
  PasswordHasher,
  scryptParams,
  Slots,
  storedParams,
  verifyPassword,
} from './password.js';

// The cheapest cost the settings accept keeps these fast; the default cost is proven in settings.spec.
const CHEAP = scryptParams(2 ** 14);

describe('password hashing', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery staple', CHEAP);
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(hash).not.toContain('correct horse');
    await expect(verifyPassword('correct horse battery staple', hash)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', hash)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password!!', CHEAP), hashPassword('same password!!', CHEAP)]);
    expect(a).not.toBe(b);
  });

  it('refuses stored values of another format or with parameters out of bounds', async () => {
    await expect(verifyPassword('x', 'md5$abc')).resolves.toBe(false);
    const good = await hashPassword('x', CHEAP);
    const [, , , , salt, key] = good.split('$');
    for (const params of ['1000$8$1', `${2 ** 24}$8$1`, '16384$0$1', '16384$8$99', '16384$8$x']) {
      const stored = `scrypt$${params}$${salt}$${key}`;
      expect(storedParams(stored)).toBeUndefined();
      await expect(verifyPassword('x', stored)).resolves.toBe(false);
    }
  });

  it('computes the OWASP cost (N=2^17, r=8, p=1) within the memory limit it sets', async () => {
    const params = scryptParams(OWASP_SCRYPT_N);
    expect(params).toEqual({ N: 131072, r: 8, p: 1 });
    const hash = await hashPassword('correct horse battery staple', params);
    expect(storedParams(hash)).toEqual(params);
    await expect(verifyPassword('correct horse battery staple', hash)).resolves.toBe(true);
  });

  it('calls a hash of lower cost weaker than the target, never an equal or a stronger one', async () => {
    const weak = await hashPassword('pw', scryptParams(2 ** 14));
    const strong = await hashPassword('pw', scryptParams(2 ** 15));
    expect(isWeaker(weak, scryptParams(2 ** 15))).toBe(true);
    expect(isWeaker(strong, scryptParams(2 ** 15))).toBe(false);
    expect(isWeaker(strong, scryptParams(2 ** 14))).toBe(false);
    expect(isWeaker('md5$abc', scryptParams(2 ** 14))).toBe(false);
  });

  it('PasswordHasher uses the configured cost and verifies an unknown user against a dummy hash', async () => {
    const hasher = new PasswordHasher(
      loadSettings({ DATA_DIR: '/nonexistent', ...SECRETS, PASSWORD_SCRYPT_N: '16384' }),
    );
    const hash = await hasher.hash('correct horse battery staple');
    expect(storedParams(hash)?.N).toBe(16384);
    await expect(hasher.verify('correct horse battery staple', hash)).resolves.toBe(true);
    await expect(hasher.verify('correct horse battery staple', null)).resolves.toBe(false);
    expect(hasher.needsRehash(await hashPassword('pw', CHEAP))).toBe(false);
    expect(new PasswordHasher(loadSettings({ DATA_DIR: '/nonexistent', ...SECRETS })).needsRehash(hash)).toBe(true);
  });
});

const SECRETS = { JWT_SECRET: 'x'.repeat(40), VAULT_KEY: Buffer.alloc(32, 1).toString('base64') };

describe('Slots (bounded concurrent hashing)', () => {
  function deferred(): { promise: Promise<void>; resolve: () => void } {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  }

  it('runs at most `concurrency` tasks, queues up to `queueLimit`, and refuses past it with RATE_LIMITED', async () => {
    const slots = new Slots(2, 3);
    const gates = Array.from({ length: 5 }, () => deferred());
    let running = 0;
    let most = 0;
    const tasks = gates.map((gate, i) =>
      slots.run(async () => {
        running += 1;
        most = Math.max(most, running);
        await gate.promise;
        running -= 1;
        return i;
      }),
    );
    expect(slots.busy).toEqual({ running: 2, waiting: 3 });
    const refused = await slots.run(() => Promise.resolve(-1)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('RATE_LIMITED');
    expect((refused as AppError).retryAfterSeconds).toBe(1);
    for (const gate of gates) {
      gate.resolve();
    }
    await expect(Promise.all(tasks)).resolves.toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(slots.busy).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot of a task that fails', async () => {
    const slots = new Slots(1, 0);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});
