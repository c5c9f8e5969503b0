import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import selfsigned from 'selfsigned';
import { createTestCa, issueServerCert, type TestCa } from '../../examples/site/tls.js';
import { issueClientCert } from '../../test/fixtures/temporal-tls-proxy.js';
import { describeTemporalConnection, temporalConnectionOptions } from '../temporal/temporal-connection.js';
import { loadSettings, SettingsError, type Settings } from './settings.js';

const BASE = { JWT_SECRET: 'x'.repeat(40), VAULT_KEY: Buffer.alloc(32, 7).toString('base64') };
const ADDRESS = 'temporal.example.com:7233';

function problemsOf(env: Record<string, string>): string {
  try {
    loadSettings({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'tls-settings-')), ...BASE, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    return (err as SettingsError).message;
  }
  throw new Error('loadSettings accepted the settings');
}

function load(env: Record<string, string>): Settings {
  return loadSettings({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'tls-settings-')), ...BASE, ...env });
}

describe('Temporal connection settings (TLS, mTLS, API key)', () => {
  let dir: string;
  let ca: TestCa;
  let client: { cert: string; key: string };
  let other: { cert: string; key: string };
  const file = (name: string, contents: string): string => {
    const at = path.join(dir, name);
    writeFileSync(at, contents);
    return at;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tls-files-'));
    ca = await createTestCa('settings test CA');
    client = await issueClientCert(ca, 'worker');
    other = await issueServerCert(ca, ['elsewhere.test']);
  });

  it('no TLS settings: plain gRPC to the dev server, as before', () => {
    const settings = load({});
    expect(settings.temporalTls).toBeUndefined();
    expect(settings.temporalApiKey).toBeUndefined();
    expect(temporalConnectionOptions(settings)).toEqual({ address: '127.0.0.1:7233' });
    expect(describeTemporalConnection(settings)).toBe('127.0.0.1:7233 (plain gRPC)');
  });

  it('mTLS from file paths: the PEM bytes go to the connection options of client and worker alike', () => {
    const settings = load({
      TEMPORAL_ADDRESS: ADDRESS,
      TEMPORAL_TLS_CERT: file('client.pem', client.cert),
      TEMPORAL_TLS_KEY: file('client.key', client.key),
      TEMPORAL_TLS_CA: file('ca.pem', ca.cert),
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
    });
    expect(temporalConnectionOptions(settings)).toEqual({
      address: ADDRESS,
      tls: {
        serverNameOverride: 'frontend.temporal.internal',
        serverRootCACertificate: Buffer.from(ca.cert),
        clientCertPair: { crt: Buffer.from(client.cert), key: Buffer.from(client.key) },
      },
    });
    expect(describeTemporalConnection(settings)).toBe(`${ADDRESS} (mTLS)`);
  });

  it('takes the PEM itself too, with \\n standing for line breaks (a one-line secret value)', () => {
    const oneLine = (pem: string): string => pem.trim().replace(/\r?\n/g, '\\n');
    const settings = load({
      TEMPORAL_ADDRESS: ADDRESS,
      TEMPORAL_TLS_CERT: oneLine(client.cert),
      TEMPORAL_TLS_KEY: client.key,
      TEMPORAL_TLS_CA: oneLine(ca.cert),
    });
    expect(settings.temporalTls?.clientCert?.toString()).toBe(client.cert.trim());
    expect(settings.temporalTls?.clientKey?.toString()).toBe(client.key.trim());
    expect(settings.temporalTls?.serverCa?.toString()).toBe(ca.cert.trim());
  });

  it('an API key implies TLS with the system roots (Temporal Cloud) and is sent by the SDK as a bearer token', () => {
    const settings = load({ TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233', TEMPORAL_API_KEY: 'key-123' });
    expect(temporalConnectionOptions(settings)).toEqual({
      address: 'eu-west-1.aws.api.temporal.io:7233',
      tls: {},
      apiKey: 'key-123',
    });
    expect(describeTemporalConnection(settings)).toBe('eu-west-1.aws.api.temporal.io:7233 (TLS, API key)');
    expect(describeTemporalConnection(settings)).not.toContain('key-123');
  });

  it('TEMPORAL_TLS=true alone: TLS with the system roots, no client certificate', () => {
    expect(temporalConnectionOptions(load({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS: 'true' })).tls).toEqual({});
    expect(load({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS: 'false' }).temporalTls).toBeUndefined();
  });

  it('refuses a certificate without its key, and a key without its certificate, naming both', () => {
    expect(problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS_CERT: file('c1.pem', client.cert) })).toMatch(
      /TEMPORAL_TLS_CERT is set without TEMPORAL_TLS_KEY/,
    );
    expect(problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS_KEY: file('k1.pem', client.key) })).toMatch(
      /TEMPORAL_TLS_KEY is set without TEMPORAL_TLS_CERT/,
    );
  });

  it('refuses files that cannot be read, naming the variable (and the path, except for the key)', () => {
    const missing = path.join(dir, 'nope', 'client.pem');
    const message = problemsOf({
      TEMPORAL_ADDRESS: ADDRESS,
      TEMPORAL_TLS_CERT: missing,
      TEMPORAL_TLS_KEY: path.join(dir, 'nope', 'secret-client.key'),
      TEMPORAL_TLS_CA: path.join(dir, 'nope', 'ca.pem'),
    });
    expect(message).toContain(`TEMPORAL_TLS_CERT names a file that cannot be read (ENOENT): ${missing}`);
    expect(message).toContain('TEMPORAL_TLS_KEY names a file that cannot be read (ENOENT)');
    expect(message).toContain('TEMPORAL_TLS_CA names a file that cannot be read (ENOENT)');
    // The key's value may be the key itself (a pasted body without its BEGIN line): never echoed.
    expect(message).not.toContain('secret-client.key');
  });

  it('refuses TLS settings and an API key without TEMPORAL_ADDRESS: the dev server has no TLS', () => {
    expect(problemsOf({ TEMPORAL_API_KEY: 'key-123' })).toMatch(/TEMPORAL_API_KEY needs TEMPORAL_ADDRESS/);
    const mtls = problemsOf({
      TEMPORAL_TLS_CERT: file('c2.pem', client.cert),
      TEMPORAL_TLS_KEY: file('k2.pem', client.key),
    });
    expect(mtls).toMatch(/TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY need TEMPORAL_ADDRESS/);
    expect(problemsOf({ TEMPORAL_TLS: 'true' })).toMatch(/TEMPORAL_TLS needs TEMPORAL_ADDRESS/);
  });

  it('refuses malformed PEM, a key that is not the certificate’s, and says so without quoting the key', () => {
    const garbageKey = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----\n';
    const message = problemsOf({
      TEMPORAL_ADDRESS: ADDRESS,
      TEMPORAL_TLS_CERT: file('bad-cert.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      TEMPORAL_TLS_KEY: garbageKey,
      TEMPORAL_TLS_CA: file('bad-ca.pem', 'hello'),
    });
    expect(message).toContain('TEMPORAL_TLS_CERT holds a malformed PEM certificate');
    expect(message).toContain('TEMPORAL_TLS_KEY holds a malformed or passphrase-protected PEM private key');
    expect(message).toContain('TEMPORAL_TLS_CA holds no PEM certificate');
    expect(message).not.toContain('bm90IGEga2V5');

    expect(
      problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS_CERT: client.cert, TEMPORAL_TLS_KEY: 'just-a-secret-word' }),
    ).toMatch(/TEMPORAL_TLS_KEY names a file that cannot be read/);
    expect(
      problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS_CERT: client.cert, TEMPORAL_TLS_KEY: file('k.pem', 'x') }),
    ).toContain('TEMPORAL_TLS_KEY holds no PEM private key');
    expect(
      problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS_CERT: client.cert, TEMPORAL_TLS_KEY: other.key }),
    ).toContain('TEMPORAL_TLS_KEY is not the private key of the certificate in TEMPORAL_TLS_CERT');
  });

  it('refuses an expired client certificate before the server does', async () => {
    const expired = await selfsigned.generate([{ name: 'commonName', value: 'old worker' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate: new Date(Date.now() - 10 * 86_400_000),
      notAfterDate: new Date(Date.now() - 86_400_000),
      ca: { key: ca.key, cert: ca.cert },
    });
    expect(
      problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS_CERT: expired.cert, TEMPORAL_TLS_KEY: expired.private }),
    ).toMatch(/TEMPORAL_TLS_CERT expired on \d{4}-/);
  });

  it('refuses an API key that cannot be a header value, a bad server name, and TLS=false with TLS settings', () => {
    const message = problemsOf({
      TEMPORAL_ADDRESS: ADDRESS,
      TEMPORAL_API_KEY: 'two words-secret',
      TEMPORAL_TLS_SERVER_NAME: 'not a name',
    });
    expect(message).toContain('TEMPORAL_API_KEY must be one word of printable ASCII characters');
    expect(message).not.toContain('words-secret');
    expect(message).toContain('TEMPORAL_TLS_SERVER_NAME must be a host name');
    expect(problemsOf({ TEMPORAL_ADDRESS: ADDRESS, TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' })).toMatch(
      /TEMPORAL_TLS=false contradicts TEMPORAL_API_KEY/,
    );
  });
});
