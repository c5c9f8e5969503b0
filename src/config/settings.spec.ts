import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { effectiveDatabaseUrl, loadSettings, parseVaultKeys, SettingsError } from './settings.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'settings-'));
}

describe('loadSettings', () => {
  it('has defaults that make a fresh machine work, and keeps generated secrets under DATA_DIR', () => {
    const dir = tempDir();
    const first = loadSettings({ DATA_DIR: dir });
    expect(first.port).toBe(3000);
    expect(first.publicBaseUrl).toBe('http://localhost:3000');
    expect(first.chatTimeoutMs).toBe(90_000);
    expect(first.sessionTtlSeconds).toBe(86_400);
    expect(first.jwtTtlSeconds).toBe(3600);
    expect(first.oauthClientId).toBe('agentsite');
    expect(first.vaultKeys).toHaveLength(1);
    expect(first.vaultKeys[0]?.key).toHaveLength(32);
    expect(effectiveDatabaseUrl(first)).toContain(':54329/agentsite');
    // A second process reads the same generated secrets.
    const second = loadSettings({ DATA_DIR: dir });
    expect(second.jwtSecret).toBe(first.jwtSecret);
    expect(second.vaultKeys[0]?.key.equals(first.vaultKeys[0]!.key)).toBe(true);
    const kept = JSON.parse(readFileSync(path.join(dir, 'secrets.json'), 'utf8')) as { jwtSecret: string };
    expect(kept.jwtSecret).toBe(first.jwtSecret);
  });

  it('reports every malformed setting by name, at once', () => {
    let caught: unknown;
    try {
      loadSettings({
        DATA_DIR: tempDir(),
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        TEMPORAL_ADDRESS: 'not an address',
        CHAT_TIMEOUT_MS: '-5',
        TRUST_PROXY: 'maybe',
        LOG_LEVEL: 'loud',
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SettingsError);
    const message = (caught as SettingsError).message;
    for (const name of ['PORT', 'DATABASE_URL', 'TEMPORAL_ADDRESS', 'CHAT_TIMEOUT_MS', 'TRUST_PROXY', 'LOG_LEVEL']) {
      expect(message).toContain(name);
    }
  });

  it('refuses a short JWT_SECRET and a malformed VAULT_KEY', () => {
    expect(() => loadSettings({ DATA_DIR: tempDir(), JWT_SECRET: 'short', VAULT_KEY: KEY })).toThrow(/JWT_SECRET/);
    expect(() => loadSettings({ DATA_DIR: tempDir(), JWT_SECRET: 'x'.repeat(40), VAULT_KEY: 'abc' })).toThrow(
      /VAULT_KEY/,
    );
  });
});

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
});

describe('parseVaultKeys', () => {
  it('reads a single key and id:key lists, first one encrypting', () => {
    const problems: string[] = [];
    expect(parseVaultKeys(KEY, problems).map((k) => k.id)).toEqual(['k1']);
    const other = Buffer.alloc(32, 9).toString('base64');
    expect(parseVaultKeys(`new:${other},old:${KEY}`, problems).map((k) => k.id)).toEqual(['new', 'old']);
    expect(problems).toEqual([]);
  });

  it('names wrong lengths and duplicate ids', () => {
    const problems: string[] = [];
    parseVaultKeys(`a:${Buffer.alloc(16).toString('base64')},b:${KEY},b:${KEY}`, problems);
    expect(problems).toEqual([
      'VAULT_KEY entry 1 must be a base64-encoded 32-byte key',
      'VAULT_KEY key id "b" appears twice',
    ]);
  });
});
