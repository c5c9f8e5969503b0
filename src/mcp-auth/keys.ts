import { createPrivateKey, hkdfSync, type JsonWebKey } from 'node:crypto';

/**
 * The authorization server's keys, derived from JWT_SECRET with HKDF-SHA256 (one label each), so
 * every API process has the same ones without storing any: the cookie keys (its session and
 * interaction cookies are signed) and an Ed25519 signing key (oidc-provider wants one; it signs
 * nothing the MCP flow uses, since access tokens are opaque and no ID token is issued). Rotating
 * JWT_SECRET rotates them: pending consents and sessions end; issued tokens stay (they are stored,
 * not signed).
 */
function derive(secret: string, label: string, bytes: number): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'agentsite', `agentsite mcp-oauth ${label}`, bytes));
}

export function cookieKeys(jwtSecret: string): string[] {
  return [derive(jwtSecret, 'cookie keys', 32).toString('base64url')];
}

/** PKCS#8 prefix of an Ed25519 private key (RFC 8410), followed by the 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function signingJwks(jwtSecret: string): { keys: JsonWebKey[] } {
  const seed = derive(jwtSecret, 'signing key', 32);
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return { keys: [{ ...key.export({ format: 'jwk' }), kid: 'mcp-oauth-1', use: 'sig', alg: 'EdDSA' }] };
}
