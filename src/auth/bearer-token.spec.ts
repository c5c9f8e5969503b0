import { describe, expect, it } from '@jest/globals';
import type { ApiRequest } from '../common/http.js';
import { bearerToken } from './jwt.strategy.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

function withHeader(authorization: string | undefined): ApiRequest {
  return { headers: authorization === undefined ? {} : { authorization } } as unknown as ApiRequest;
}

describe('bearerToken', () => {
  it('reads `Bearer <token>`, the scheme in any case and followed by any number of spaces', () => {
    for (const header of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}`, `Bearer ${TOKEN}=`]) {
      expect(bearerToken(withHeader(header))).toBe(header.split(/ +/)[1]);
    }
  });

  it('refuses anything but exactly one token after the scheme', () => {
    // passport-jwt's extractor read the first two words: `Bearer <token> <more>` passed.
    for (const header of [
      undefined,
      '',
      'Bearer',
      `Bearer ${TOKEN} ${TOKEN}`,
      `Bearer ${TOKEN} x`,
      `Bearer\t${TOKEN}`,
      `Token ${TOKEN}`,
      `Basic ${TOKEN}`,
      TOKEN,
      `Bearer ${TOKEN},${TOKEN}`,
      'Bearer tökén',
      `Bearer ${TOKEN}=x`,
    ]) {
      expect(bearerToken(withHeader(header))).toBeNull();
    }
  });
});
