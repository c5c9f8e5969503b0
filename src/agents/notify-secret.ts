import { randomBytes } from 'node:crypto';
import type { VaultCipher } from '../vault/vault-cipher.js';

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

export function sealNotifySecret(cipher: VaultCipher, agentId: string, secret: string): string {
  const sealed = cipher.seal(secret, notifySecretAad(agentId));
  return [sealed.keyId, sealed.iv, sealed.authTag, sealed.ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
    .join(':');
}

/** The secret of `stored` (VaultTamperedError when it does not open; Error when it is no sealed value). */
export function openNotifySecret(cipher: VaultCipher, agentId: string, stored: string): string {
  const parts = stored.split(':');
  if (parts.length !== 4) {
    throw new Error('agents.notify_secret is not a sealed value');
  }
  const [keyId, iv, authTag, ciphertext] = parts as [string, string, string, string];
  return cipher.open(
    {
      keyId,
      iv: Buffer.from(iv, 'base64'),
      authTag: Buffer.from(authTag, 'base64'),
      ciphertext: Buffer.from(ciphertext, 'base64'),
    },
    notifySecretAad(agentId),
  );
}
