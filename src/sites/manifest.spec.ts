import { describe, expect, it } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import {
  assertStoredManifestUsable,
  expectedIssuer,
  type Manifest,
  type OAuthManifestAuth,
  registrableDomain,
  validateManifest,
} from './manifest.js';

const SITE = 'https://notes.example.co.uk';

function manifest(overrides: { server?: unknown; auth?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    name: 'Notes',
    version: '1.0.0',
    description: 'Notes',
    server: overrides.server ?? { url: `${SITE}/api` },
    auth: {
      type: 'oauth2',
      authorization_url: 'https://login.example.co.uk/oauth/authorize',
      token_url: 'https://login.example.co.uk/oauth/token',
      scopes: ['read'],
      ...overrides.auth,
    },
    tools: [{ name: 'list_notes', description: 'List', input_schema: { type: 'object', properties: {} } }],
  };
}

/** The MANIFEST_INVALID details of a manifest (fails the test when it is accepted). */
function problems(json: unknown, siteUrl = SITE): Array<{ field: string; message: string }> {
  try {
    validateManifest(json, siteUrl);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('MANIFEST_INVALID');
    return (err as AppError).details ?? [];
  }
  throw new Error('the manifest was accepted');
}

describe('manifest URLs', () => {
  it('accepts endpoints on other hosts and ports of the same registrable domain', () => {
    expect(validateManifest(manifest(), SITE).auth).toMatchObject({ type: 'oauth2' });
    expect(
      validateManifest(
        manifest({
          server: { url: 'https://api.example.co.uk:8443/v1' },
          auth: { issuer: 'https://login.example.co.uk/realms/notes' },
        }),
        SITE,
      ).server.url,
    ).toBe('https://api.example.co.uk:8443/v1');
    // Test sites: localhost on several ports is one domain.
    expect(
      validateManifest(
        manifest({
          server: { url: 'https://localhost:9001/api' },
          auth: {
            authorization_url: 'https://localhost:9002/authorize',
            token_url: 'https://localhost:9002/token',
          },
        }),
        'https://localhost:9001',
      ).auth.type,
    ).toBe('oauth2');
  });

  it.each([
    ['port 99999', 'https://notes.example.co.uk:99999/api'],
    ['an IPv4 host out of range', 'https://256.256.256.256/api'],
    ['a host with a forbidden code point', 'https://notes^example.co.uk/api'],
    ['an unclosed IPv6 host', 'https://[::1/api'],
    ['plain http', 'http://notes.example.co.uk/api'],
    ['credentials', 'https://user:secret@notes.example.co.uk/api'],
  ])('refuses a URL with %s, naming the field', (_label, url) => {
    for (const [field, json] of [
      ['server.url', manifest({ server: { url } })],
      ['auth.authorization_url', manifest({ auth: { authorization_url: url } })],
      ['auth.token_url', manifest({ auth: { token_url: url } })],
      ['auth.issuer', manifest({ auth: { issuer: url } })],
    ] as const) {
      const found = problems(json);
      expect(found.map((p) => p.field)).toEqual([field]);
    }
  });

  it.each([
    // An honest provider's endpoints in an attacker's manifest (mix-up): the code would go to the attacker.
    ['auth.authorization_url', manifest({ auth: { authorization_url: 'https://accounts.google.com/o/oauth2/auth' } })],
    ['auth.token_url', manifest({ auth: { token_url: 'https://oauth2.googleapis.com/token' } })],
    ['auth.issuer', manifest({ auth: { issuer: 'https://accounts.google.com' } })],
    // The honest site's endpoints, the attacker's server: the tokens would go to the attacker.
    ['server.url', manifest({ server: { url: 'https://evil.co.uk/api' } })],
    // Two tenants of one hosting suffix (a private entry of the Public Suffix List) are two domains.
    ['server.url', manifest({ server: { url: 'https://notes.github.io/api' } })],
  ])('refuses %s outside the registrable domain of the site', (field, json) => {
    const found = problems(json);
    expect(found).toEqual([{ field, message: expect.stringContaining("outside the site's registrable domain") }]);
  });

  it('holds the tenants of a private suffix apart, and IP addresses and localhost to themselves', () => {
    const tenant = manifest({ server: { url: 'https://other.github.io/api' } });
    expect(problems(tenant, 'https://notes.github.io').map((p) => p.field)).toEqual([
      'server.url',
      'auth.authorization_url',
      'auth.token_url',
    ]);
    expect(registrableDomain(new URL('https://a.b.example.co.uk'))).toBe('example.co.uk');
    expect(registrableDomain(new URL('https://127.0.0.1:8443'))).toBe('127.0.0.1');
    expect(registrableDomain(new URL('https://[::1]:8443'))).toBe('::1');
    expect(registrableDomain(new URL('https://localhost:8443'))).toBe('localhost');
    expect(registrableDomain(new URL('https://Notes.Example.COM./x'))).toBe('example.com');
    const local = manifest({
      server: { url: 'https://localhost:9001/api' },
      auth: { authorization_url: 'https://127.0.0.1:9001/a', token_url: 'https://localhost:9001/t' },
    });
    expect(problems(local, 'https://localhost:9001').map((p) => p.field)).toEqual(['auth.authorization_url']);
  });

  it('expects the declared issuer, else the origin of the authorization endpoint', () => {
    const auth = manifest().auth as OAuthManifestAuth;
    expect(expectedIssuer(auth)).toBe('https://login.example.co.uk');
    expect(expectedIssuer({ ...auth, issuer: 'https://login.example.co.uk/realms/x' })).toBe(
      'https://login.example.co.uk/realms/x',
    );
  });
});

describe('assertStoredManifestUsable', () => {
  it('remembers a usable manifest object for its site URL only, and never remembers a refusal', () => {
    const stored = validateManifest(manifest(), SITE);
    assertStoredManifestUsable(stored, SITE);
    assertStoredManifestUsable(stored, SITE);
    // The same object held against another site's address is checked again, and refused.
    expect(() => assertStoredManifestUsable(stored, 'https://elsewhere.example.org')).toThrow(AppError);
    expect(() => assertStoredManifestUsable(stored, 'https://elsewhere.example.org')).toThrow(AppError);
    // A manifest stored before today's rules (another object) is refused each time.
    const old = { ...stored, server: { url: 'https://other.example.net/api' } } as Manifest;
    expect(() => assertStoredManifestUsable(old, SITE)).toThrow(/no longer accepted/);
    expect(() => assertStoredManifestUsable(old, SITE)).toThrow(/no longer accepted/);
    assertStoredManifestUsable(stored, SITE);
  });
});
