import { randomBytes } from 'node:crypto';
import type { Sealed, VaultCipher } from '../vault/vault-cipher.js';

/**
 * An agent's notification signing secret (Standard Webhooks: `whsec_<base64 of 32 random bytes>`),
 * kept in `agents.notify_secret` sealed with the vault key (AES-256-GCM, bound to the agent's id) as
 * `<keyId>:<iv>:<authTag>:<ciphertext>` (base64 each). The API seals it; the notification sender
 * opens it. Shown once to the user (create, the PATCH that first sets notify, rotate); never logged.
 */
export function newNotifySecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The additional data the secret is sealed with: copied onto another agent's row, it does not open. */
export const notifySecretAad = (agentId: string): string => `agents.notify_secret:${agentId}`;

/** The stored form of a sealed value: `<keyId>:<iv>:<authTag>:<ciphertext>`, base64 each but the key id. */
export function storedSealedSecret(sealed: Sealed): string {
  return [sealed.keyId, sealed.iv, sealed.authTag, sealed.ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
    .join(':');
}

/** The sealed value of a stored `<keyId>:<iv>:<authTag>:<ciphertext>`; undefined when malformed. */
export function parseSealedSecret(stored: string): Sealed | undefined {
  const parts = stored.split(':');
  if (parts.length !== 4) {
    return undefined;
  }
  const [keyId, iv, authTag, ciphertext] = parts as [string, string, string, string];
  return {
    keyId,
    iv: Buffer.from(iv, 'base64'),
    authTag: Buffer.from(authTag, 'base64'),
    ciphertext: Buffer.from(ciphertext, 'base64'),
  };
}

export function sealNotifySecret(cipher: VaultCipher, agentId: string, secret: string): string {
  return storedSealedSecret(cipher.seal(secret, notifySecretAad(agentId)));
}

/** The secret of `stored` (VaultTamperedError when it does not open; Error when it is no sealed value). */
export function openNotifySecret(cipher: VaultCipher, agentId: string, stored: string): string {
  const sealed = parseSealedSecret(stored);
  if (sealed === undefined) {
    throw new Error('agents.notify_secret is not a sealed value');
  }
  return cipher.open(sealed, notifySecretAad(agentId));
}
