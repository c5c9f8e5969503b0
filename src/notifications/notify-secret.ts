import { randomBytes } from 'node:crypto';
import type { Sealed, VaultCipher } from '../vault/vault-cipher.js';

/**
 * An agent's notification signing secret: `whsec_<base64 of 32 random bytes>` (Standard Webhooks),
 * kept in `agents.notify_secret` sealed with the vault key (AES-256-GCM, bound to the agent's id as
 * additional data) as one text value: JSON `{k: keyId, iv, c: ciphertext, t: authTag}` (base64).
 * The agents feature seals it when notify is set or the secret rotated; the worker opens it to sign.
 */
export const NOTIFY_SECRET_PREFIX = 'whsec_';

/** A new secret, shown once to the user. */
export function newNotifySecret(): string {
  return `${NOTIFY_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The additional data of an agent's sealed secret: a value copied onto another agent does not open. */
export function notifySecretAad(agentId: string): string {
  return `agents.notify_secret:${agentId}`;
}

interface StoredSealed {
  k: string;
  iv: string;
  c: string;
  t: string;
}

/** The column's text for `secret`, sealed under the vault's current key. */
export function sealNotifySecret(cipher: VaultCipher, agentId: string, secret: string): string {
  const sealed = cipher.seal(secret, notifySecretAad(agentId));
  const stored: StoredSealed = {
    k: sealed.keyId,
    iv: sealed.iv.toString('base64'),
    c: sealed.ciphertext.toString('base64'),
    t: sealed.authTag.toString('base64'),
  };
  return JSON.stringify(stored);
}

/** The sealed parts of the column's text (for vault:rotate's re-sealing too). */
export function sealedNotifySecret(stored: string): Sealed {
  const parsed = JSON.parse(stored) as StoredSealed;
  return {
    keyId: parsed.k,
    iv: Buffer.from(parsed.iv, 'base64'),
    ciphertext: Buffer.from(parsed.c, 'base64'),
    authTag: Buffer.from(parsed.t, 'base64'),
  };
}

/** The secret in the column's text; throws VaultTamperedError when it does not open. */
export function openNotifySecret(cipher: VaultCipher, agentId: string, stored: string): string {
  return cipher.open(sealedNotifySecret(stored), notifySecretAad(agentId));
}
