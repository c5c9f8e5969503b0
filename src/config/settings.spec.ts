import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { effectiveDatabaseUrl, loadSettings, parseTrustProxy, parseVaultKeys, SettingsError } from './settings.js';

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
    // Passwords: OWASP's scrypt cost unless lowered on purpose (the test stacks lower it for speed).
    expect(first.passwordScryptN).toBe(2 ** 17);
    expect(first.passwordHashConcurrency).toBe(2);
    expect(first.passwordHashQueue).toBe(16);
    expect(first.authAttemptsPerIp).toBe(20);
    expect(first.authAttemptsWindowSeconds).toBe(60);
    expect(first.loginFailuresPerAccount).toBe(10);
    expect(first.loginFailureWindowSeconds).toBe(900);
    expect(first.trustProxy).toBe(false);
    expect(Object.keys(first)).not.toContain('adminEmails');
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

  it('accepts PASSWORD_SCRYPT_N only as a power of two from 2^14 to 2^20', () => {
    const secrets = { DATA_DIR: tempDir(), JWT_SECRET: 'x'.repeat(40), VAULT_KEY: KEY };
    expect(loadSettings({ ...secrets, PASSWORD_SCRYPT_N: '16384' }).passwordScryptN).toBe(16384);
    for (const bad of ['8192', '100000', String(2 ** 21)]) {
      expect(() => loadSettings({ ...secrets, PASSWORD_SCRYPT_N: bad })).toThrow(/PASSWORD_SCRYPT_N/);
    }
  });

  it("gives each vault half of a domain's outgoing budget by default, so no account holds all of it", () => {
    const secrets = { DATA_DIR: tempDir(), JWT_SECRET: 'x'.repeat(40), VAULT_KEY: KEY };
    expect(loadSettings(secrets)).toMatchObject({ outgoingCallsPerMinute: 10, outgoingCallsPerMinutePerUser: 5 });
    expect(loadSettings({ ...secrets, OUTGOING_CALLS_PER_MINUTE: '7' }).outgoingCallsPerMinutePerUser).toBe(4);
    expect(loadSettings({ ...secrets, OUTGOING_CALLS_PER_MINUTE: '1' }).outgoingCallsPerMinutePerUser).toBe(1);
    // Set, it is taken as it is (equal to the budget: no sub-limit).
    expect(
      loadSettings({ ...secrets, OUTGOING_CALLS_PER_MINUTE: '10', OUTGOING_CALLS_PER_MINUTE_PER_USER: '10' })
        .outgoingCallsPerMinutePerUser,
    ).toBe(10);
    expect(() => loadSettings({ ...secrets, OUTGOING_CALLS_PER_MINUTE_PER_USER: '0' })).toThrow(
      /OUTGOING_CALLS_PER_MINUTE_PER_USER/,
    );
  });

  it('refuses a short JWT_SECRET and a malformed VAULT_KEY', () => {
    expect(() => loadSettings({ DATA_DIR: tempDir(), JWT_SECRET: 'short', VAULT_KEY: KEY })).toThrow(/JWT_SECRET/);
    expect(() => loadSettings({ DATA_DIR: tempDir(), JWT_SECRET: 'x'.repeat(40), VAULT_KEY: 'abc' })).toThrow(
      /VAULT_KEY/,
    );
  });
});

describe('TEMPORAL_CODEC_KEY and TEMPORAL_UI_ORIGIN', () => {
  it('generates the payload key once under DATA_DIR, which every process then reads', () => {
    const dir = tempDir();
    const first = loadSettings({ DATA_DIR: dir });
    expect(first.temporalCodecKeys).toHaveLength(1);
    expect(first.temporalCodecKeys[0]?.key).toHaveLength(32);
    const second = loadSettings({ DATA_DIR: dir });
    expect(second.temporalCodecKeys[0]?.key.equals(first.temporalCodecKeys[0]!.key)).toBe(true);
    expect(readFileSync(path.join(dir, 'temporal-codec-key'), 'utf8').trim()).toMatch(/^p1:[A-Za-z0-9+/]{43}=$/);
    // Its own key, not the vault's.
    expect(first.temporalCodecKeys[0]?.key.equals(first.vaultKeys[0]!.key)).toBe(false);
  });

  it("takes VAULT_KEY's format: the first key encrypts, the others decrypt; mistakes name the variable", () => {
    const other = Buffer.alloc(32, 8).toString('base64');
    const settings = loadSettings({ DATA_DIR: tempDir(), TEMPORAL_CODEC_KEY: `new:${KEY},old:${other}` });
    expect(settings.temporalCodecKeys.map((k) => k.id)).toEqual(['new', 'old']);
    for (const bad of ['abc', `a:${KEY},a:${other}`, `bad id:${KEY}`]) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), TEMPORAL_CODEC_KEY: bad })).toThrow(/TEMPORAL_CODEC_KEY/);
    }
  });

  it('allows the dev UI origin by default outside production, and only the origins set when set', () => {
    const defaults = loadSettings({ DATA_DIR: tempDir(), TEMPORAL_UI_PORT: '9000' });
    expect(defaults.temporalUiOrigins).toEqual(['http://localhost:9000', 'http://127.0.0.1:9000']);
    const set = loadSettings({ DATA_DIR: tempDir(), TEMPORAL_UI_ORIGIN: 'https://temporal.example.com' });
    expect(set.temporalUiOrigins).toEqual(['https://temporal.example.com']);
    // In production, no default: only the UI origins configured are answered.
    expect(loadSettings({ DATA_DIR: tempDir(), NODE_ENV: 'production' }).temporalUiOrigins).toEqual([]);
    const production = loadSettings({
      DATA_DIR: tempDir(),
      NODE_ENV: 'production',
      TEMPORAL_UI_ORIGIN: 'https://temporal.example.com',
    });
    expect(production.temporalUiOrigins).toEqual(['https://temporal.example.com']);
    for (const bad of ['temporal.example.com', 'https://temporal.example.com/ui', 'ftp://x.example']) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), TEMPORAL_UI_ORIGIN: bad })).toThrow(/TEMPORAL_UI_ORIGIN/);
    }
  });
});

describe('CORS_ORIGINS', () => {
  it('is empty when unset (no CORS at all) and keeps exact origins when set', () => {
    expect(loadSettings({ DATA_DIR: tempDir() }).corsOrigins).toEqual([]);
    const set = loadSettings({
      DATA_DIR: tempDir(),
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173/',
    });
    expect(set.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
  });

  it('refuses a wildcard, null and anything that is not an origin, naming the variable', () => {
    for (const bad of ['*', 'null', 'https://*.example.com', 'app.example.com', 'https://app.example.com/path']) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), CORS_ORIGINS: `https://ok.example.com,${bad}` })).toThrow(
        /CORS_ORIGINS/,
      );
    }
  });
});

describe('HOST', () => {
  it('is loopback unless set, and must be an address to listen on', () => {
    expect(loadSettings({ DATA_DIR: tempDir() }).host).toBe('127.0.0.1');
    expect(loadSettings({ DATA_DIR: tempDir(), HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    for (const wrong of ['example.com', '0.0.0.0:3000', '256.1.1.1', 'all']) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), HOST: wrong })).toThrow(
        `HOST must be an IP address to listen on (127.0.0.1, 0.0.0.0, ::1, ::) or localhost, got "${wrong}"`,
      );
    }
  });
});

describe('TRUST_PROXY', () => {
  const parse = (raw: string | undefined): { value: unknown; problems: string[] } => {
    const problems: string[] = [];
    return { value: parseTrustProxy(raw, problems), problems };
  };

  it('is off unless set, and takes a number of hops or a list of proxy addresses and CIDRs', () => {
    expect(parse(undefined)).toEqual({ value: false, problems: [] });
    expect(parse('false')).toEqual({ value: false, problems: [] });
    expect(parse('0')).toEqual({ value: false, problems: [] });
    expect(parse('1')).toEqual({ value: 1, problems: [] });
    expect(parse('2')).toEqual({ value: 2, problems: [] });
    expect(parse('10.0.0.0/8, 127.0.0.1,fd00::/8, loopback')).toEqual({
      value: ['10.0.0.0/8', '127.0.0.1', 'fd00::/8', 'loopback'],
      problems: [],
    });
  });

  it('refuses true, explaining why and what to set instead', () => {
    for (const raw of ['true', 'TRUE', 'yes', 'on']) {
      const { problems } = parse(raw);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^TRUST_PROXY=true would take the client address from any X-Forwarded-For/);
      expect(problems[0]).toContain('number of proxies');
    }
    expect(() => loadSettings({ DATA_DIR: tempDir(), TRUST_PROXY: 'true' })).toThrow(SettingsError);
  });

  it('refuses what is neither a hop count nor addresses', () => {
    for (const raw of [
      'maybe',
      '10.0.0.0/33',
      '300.1.1.1',
      '127.1',
      '10.0.0.1/8/8',
      '-1',
      '99',
      ',',
      'proxy.local',
      // Ranges that cover public clients: the same as trusting everyone.
      '0.0.0.0/0',
      '::/0',
      '10.0.0.1, 0.0.0.0/1',
      '2000::/3',
    ]) {
      expect(parse(raw).problems).toHaveLength(1);
    }
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

describe('run retention settings', () => {
  const secrets = { JWT_SECRET: 'x'.repeat(40), VAULT_KEY: KEY };

  it('keep Temporal history 30 days and runs forever unless set', () => {
    const settings = loadSettings({ DATA_DIR: tempDir(), ...secrets });
    expect(settings.runHistoryRetentionDays).toBe(30);
    expect(settings.runRetentionDays).toBeUndefined();
    const set = loadSettings({
      DATA_DIR: tempDir(),
      ...secrets,
      RUN_HISTORY_RETENTION_DAYS: '14',
      RUN_RETENTION_DAYS: '365',
    });
    expect(set.runHistoryRetentionDays).toBe(14);
    expect(set.runRetentionDays).toBe(365);
  });

  it('refuse history retention outside 1 to 90 days and run retention below a day, naming the variable', () => {
    for (const bad of ['0', '91', '1.5', 'week']) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), ...secrets, RUN_HISTORY_RETENTION_DAYS: bad })).toThrow(
        /RUN_HISTORY_RETENTION_DAYS/,
      );
    }
    for (const bad of ['0', '-1', 'forever']) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), ...secrets, RUN_RETENTION_DAYS: bad })).toThrow(
        /RUN_RETENTION_DAYS/,
      );
    }
  });
});

describe('trace settings', () => {
  it('trace nothing unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and take an OTLP/HTTP base URL and headers', () => {
    const off = loadSettings({ DATA_DIR: tempDir() });
    expect(off.otelExporterOtlpEndpoint).toBeUndefined();
    expect(off.otelExporterOtlpHeaders).toEqual({});
    const on = loadSettings({
      DATA_DIR: tempDir(),
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc%3D%3D, x-team=ops',
    });
    expect(on.otelExporterOtlpEndpoint).toBe('http://otel-collector:4318');
    expect(on.otelExporterOtlpHeaders).toEqual({ authorization: 'Bearer abc==', 'x-team': 'ops' });
  });

  it('refuse an endpoint that is not an http(s) URL and malformed headers, without repeating header values', () => {
    for (const [env, problem] of [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://otel-collector:4317' },
        'OTEL_EXPORTER_OTLP_ENDPOINT must use http: or https:',
      ],
      [{ OTEL_EXPORTER_OTLP_HEADERS: 'authorization' }, 'OTEL_EXPORTER_OTLP_HEADERS'],
      [{ OTEL_EXPORTER_OTLP_HEADERS: 'a=1,bad header=secret-value' }, '(entry 2 is not)'],
      [{ OTEL_EXPORTER_OTLP_HEADERS: 'a=%E0%A4%A' }, 'OTEL_EXPORTER_OTLP_HEADERS'],
    ] as const) {
      let error: unknown;
      try {
        loadSettings({ DATA_DIR: tempDir(), ...env });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(SettingsError);
      expect((error as SettingsError).message).toContain(problem);
      expect((error as SettingsError).message).not.toContain('secret-value');
    }
  });
});

describe('operations settings', () => {
  const secrets = { JWT_SECRET: 'x'.repeat(40), VAULT_KEY: KEY };

  it('have no metrics token and no worker HTTP server unless set', () => {
    const settings = loadSettings({ DATA_DIR: tempDir(), ...secrets });
    expect(settings.metricsToken).toBeUndefined();
    expect(settings.workerHttpPort).toBeUndefined();
    const set = loadSettings({
      DATA_DIR: tempDir(),
      ...secrets,
      METRICS_TOKEN: 'm'.repeat(32),
      WORKER_HTTP_PORT: '3001',
    });
    expect(set.metricsToken).toBe('m'.repeat(32));
    expect(set.workerHttpPort).toBe(3001);
  });

  it('refuse a guessable METRICS_TOKEN and a WORKER_HTTP_PORT that is no port, naming the variable', () => {
    expect(() => loadSettings({ DATA_DIR: tempDir(), ...secrets, METRICS_TOKEN: 'short' })).toThrow(
      /METRICS_TOKEN must be at least 32 characters/,
    );
    for (const bad of ['0', '65536', 'http']) {
      expect(() => loadSettings({ DATA_DIR: tempDir(), ...secrets, WORKER_HTTP_PORT: bad })).toThrow(
        /WORKER_HTTP_PORT/,
      );
    }
  });
});
