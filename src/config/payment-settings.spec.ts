import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadSettings, SettingsError } from './settings.js';

// The payment settings (payment-settings.ts) as loadSettings reads them from the environment.

const KEY = Buffer.alloc(32, 7).toString('base64');

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'settings-'));
}

describe('payment provider settings', () => {
  it('default to no payments at all', () => {
    const settings = loadSettings({ DATA_DIR: tempDir() });
    expect(settings.paymentProvider).toBe('none');
    expect(settings.allowTestPayments).toBe(false);
  });

  it('refuse the test provider without ALLOW_TEST_PAYMENTS, naming both variables', () => {
    for (const allowance of [undefined, 'false', '']) {
      let caught: unknown;
      try {
        loadSettings({ DATA_DIR: tempDir(), PAYMENT_PROVIDER: 'test', ALLOW_TEST_PAYMENTS: allowance });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(SettingsError);
      expect((caught as SettingsError).message).toMatch(/PAYMENT_PROVIDER=test.*ALLOW_TEST_PAYMENTS=true/s);
    }
  });

  it('accept the test provider when it is explicitly allowed, and refuse unknown providers', () => {
    const settings = loadSettings({ DATA_DIR: tempDir(), PAYMENT_PROVIDER: 'test', ALLOW_TEST_PAYMENTS: 'true' });
    expect(settings.paymentProvider).toBe('test');
    expect(() => loadSettings({ DATA_DIR: tempDir(), PAYMENT_PROVIDER: 'paypal' })).toThrow(/PAYMENT_PROVIDER/);
  });

  it('keep the test provider on loopback: on another HOST only with ALLOW_TEST_PAYMENTS_ON_NETWORK=true', () => {
    const test = { PAYMENT_PROVIDER: 'test', ALLOW_TEST_PAYMENTS: 'true' };
    for (const host of [undefined, '127.0.0.1', '127.0.0.2', '::1', 'localhost', '::ffff:127.0.0.1']) {
      expect(loadSettings({ DATA_DIR: tempDir(), ...test, HOST: host }).paymentProvider).toBe('test');
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.5']) {
      let caught: unknown;
      try {
        loadSettings({ DATA_DIR: tempDir(), ...test, HOST: host });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(SettingsError);
      expect((caught as SettingsError).message).toContain(
        `PAYMENT_PROVIDER=test grants credits and tiers for free and HOST=${host}`,
      );
      expect((caught as SettingsError).message).toContain('ALLOW_TEST_PAYMENTS_ON_NETWORK=true');
      const allowed = loadSettings({
        DATA_DIR: tempDir(),
        ...test,
        HOST: host,
        ALLOW_TEST_PAYMENTS_ON_NETWORK: 'true',
      });
      expect(allowed).toMatchObject({ host, paymentProvider: 'test', allowTestPaymentsOnNetwork: true });
      // Other providers (none, stripe) serve every interface as asked.
      expect(loadSettings({ DATA_DIR: tempDir(), HOST: host }).host).toBe(host);
    }
  });
});

describe('Stripe settings', () => {
  const secrets = { JWT_SECRET: 'x'.repeat(40), VAULT_KEY: KEY };
  const stripe = {
    PAYMENT_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_abc123',
    STRIPE_WEBHOOK_SECRET: 'whsec_abc123',
    STRIPE_PRICE_PRO: 'price_pro1',
    STRIPE_PRICE_HARNESS: 'price_harness1',
    STRIPE_PRICE_TEAM: 'price_team1',
  };

  it('are read only with PAYMENT_PROVIDER=stripe, each price by its tier', () => {
    expect(loadSettings({ DATA_DIR: tempDir(), ...secrets }).stripe).toBeUndefined();
    const settings = loadSettings({
      DATA_DIR: tempDir(),
      ...secrets,
      ...stripe,
      STRIPE_PUBLISHABLE_KEY: 'pk_test_xyz',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
    });
    expect(settings.paymentProvider).toBe('stripe');
    expect(settings.stripe).toEqual({
      secretKey: 'sk_test_abc123',
      webhookSecret: 'whsec_abc123',
      publishableKey: 'pk_test_xyz',
      apiBase: 'http://127.0.0.1:12111',
      prices: { pro: 'price_pro1', harness: 'price_harness1', team: 'price_team1' },
    });
  });

  it('refuse a missing or misshapen key, secret or price, naming each and never printing the secrets', () => {
    let error: unknown;
    try {
      loadSettings({
        DATA_DIR: tempDir(),
        ...secrets,
        PAYMENT_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: 'pk_live_secret-value',
        STRIPE_PRICE_PRO: 'prod_1',
        STRIPE_PUBLISHABLE_KEY: 'sk_live_oops',
        STRIPE_API_BASE: 'ftp://x',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const message = (error as SettingsError).message;
    for (const name of [
      'STRIPE_SECRET_KEY must look like',
      'PAYMENT_PROVIDER=stripe needs STRIPE_WEBHOOK_SECRET',
      'STRIPE_PRICE_PRO must look like price_',
      'PAYMENT_PROVIDER=stripe needs STRIPE_PRICE_HARNESS',
      'PAYMENT_PROVIDER=stripe needs STRIPE_PRICE_TEAM',
      'STRIPE_PUBLISHABLE_KEY must look like',
      'STRIPE_API_BASE',
    ]) {
      expect(message).toContain(name);
    }
    expect(message).not.toContain('secret-value');
    expect(message).not.toContain('sk_live_oops');
  });
});
