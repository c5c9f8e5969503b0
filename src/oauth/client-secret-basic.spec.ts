import { describe, expect, it } from '@jest/globals';
import type * as oidc from 'openid-client';
import { clientSecretBasic, formEncode } from './client-secret-basic.js';

function basicOf(clientId: string, secret: string): string {
  const headers = new Headers();
  clientSecretBasic(secret)({} as oidc.ServerMetadata, { client_id: clientId }, new URLSearchParams(), headers);
  const value = headers.get('authorization') ?? '';
  expect(value.startsWith('Basic ')).toBe(true);
  return Buffer.from(value.slice('Basic '.length), 'base64').toString('utf8');
}

describe('client_secret_basic with the WHATWG form encoding', () => {
  it('leaves A-Za-z0-9 and *-._ as they are (a non-decoding server reads the id and secret as given)', () => {
    expect(basicOf('pre-registered-client', 'pre-registered-secret')).toBe(
      'pre-registered-client:pre-registered-secret',
    );
    expect(formEncode('Az09*-._')).toBe('Az09*-._');
  });

  it('percent-encodes the rest, so a colon in the id cannot split the pair and a decoding server reads the same', () => {
    expect(basicOf('a:b', 'p@ss w/rd+~é')).toBe('a%3Ab:p%40ss+w%2Frd%2B%7E%C3%A9');
    for (const value of ['a:b', 'p@ss w/rd+~é', "x!y'(z)"]) {
      expect(new URLSearchParams(`v=${formEncode(value)}`).get('v')).toBe(value);
    }
  });
});
