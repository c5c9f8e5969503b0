import { describe, expect, it } from '@jest/globals';
import { type CheckedClaims, VerifiedTokens } from './verified-tokens.js';

const claims = (exp: number, sub = 's'): CheckedClaims => ({ sub, jti: 'j', iatMs: 0, exp });

describe('VerifiedTokens', () => {
  it('answers a remembered token until the second of its exp, then forgets it', () => {
    let now = 999_000;
    const tokens = new VerifiedTokens(10, () => now);
    tokens.add('a', claims(1_000));
    expect(tokens.get('a')?.exp).toBe(1_000);
    now = 999_999;
    expect(tokens.get('a')?.exp).toBe(1_000);
    // jsonwebtoken's rule: expired once the whole seconds reach exp.
    now = 1_000_000;
    expect(tokens.get('a')).toBeUndefined();
    expect(tokens.size).toBe(0);
    expect(tokens.get('unknown')).toBeUndefined();
  });

  it('keeps at most max tokens, dropping the oldest', () => {
    const tokens = new VerifiedTokens(2, () => 0);
    tokens.add('a', claims(10, 'A'));
    tokens.add('b', claims(10, 'B'));
    tokens.add('a', claims(10, 'A2'));
    tokens.add('c', claims(10, 'C'));
    expect(tokens.size).toBe(2);
    expect(tokens.get('a')).toBeUndefined();
    expect(tokens.get('b')?.sub).toBe('B');
    expect(tokens.get('c')?.sub).toBe('C');
  });
});
