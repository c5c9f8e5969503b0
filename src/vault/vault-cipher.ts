import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';

export interface Sealed {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  authTag: Buffer;
}

/** A sealed value could not be opened: wrong key, unknown key id, or tampered bytes. */
export class VaultTamperedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VaultTamperedError';
  }
}

const IV_BYTES = 12;

/**
 * AES-256-GCM for every secret the vault keeps. The first key of VAULT_KEY encrypts; every listed
 * key decrypts (rotation). The row's identity is bound as additional data, so a ciphertext copied
 * onto another row does not open.
 */
@Injectable()
export class VaultCipher {
  /**
   * As KeyObjects, made once: a cipher made from a KeyObject costs less than half the CPU of one made
   * from the key's bytes, which Node turns into a key object at every call.
   */
  private readonly keys: Array<{ id: string; key: KeyObject }>;

  constructor(@Inject(SETTINGS) settings: Settings) {
    this.keys = settings.vaultKeys.map((k) => ({ id: k.id, key: createSecretKey(k.key) }));
  }

  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  seal(plaintext: string, aad: string): Sealed {
    const key = this.keys[0]!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: key.id, iv, ciphertext, authTag: cipher.getAuthTag() };
  }

  open(sealed: Sealed, aad: string): string {
    const key = this.keys.find((k) => k.id === sealed.keyId);
    if (key === undefined) {
      throw new VaultTamperedError(`vault key "${sealed.keyId}" is not configured in VAULT_KEY`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, sealed.iv);
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(sealed.authTag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new VaultTamperedError('a vault entry failed authentication (tampered, or sealed for another row or site)');
    }
  }
}

/**
 * The additional data a credential is sealed with: its row and its site, so a ciphertext copied onto
 * another row, or a row moved to another site, does not open.
 */
export function credentialAad(id: string, siteId: string): string {
  return `site_credentials:${id}:${siteId}`;
}

/** `…a1b2`: the last four characters, enough for a user to recognise a token. */
export function tokenHint(token: string): string {
  return `…${token.slice(-4)}`;
}
