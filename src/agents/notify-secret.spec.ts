import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Settings } from '../config/settings.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import {
  newNotifySecret,
  openNotifySecret,
  parseSealedSecret,
  sealNotifySecret,
  storedSealedSecret,
} from './notify-secret.js';

const cipher = new VaultCipher({ vaultKeys: [{ id: 'k1', key: randomBytes(32) }] } as unknown as Settings);
const AGENT = '0b9f3e6a-8d4c-4f5e-9a1b-2c3d4e5f6a7b';

describe('the notify secret’s stored form (one format for the API, the sender and vault:rotate)', () => {
  it('is <keyId>:<iv>:<authTag>:<ciphertext>, parsed back to the same sealed value', () => {
    const secret = newNotifySecret();
    const stored = sealNotifySecret(cipher, AGENT, secret);
    const parts = stored.split(':');
    expect(parts).toHaveLength(4);
    expect(parts[0]).toBe('k1');
    const sealed = parseSealedSecret(stored)!;
    expect(sealed.keyId).toBe('k1');
    expect(sealed.iv.toString('base64')).toBe(parts[1]);
    expect(sealed.authTag.toString('base64')).toBe(parts[2]);
    expect(sealed.ciphertext.toString('base64')).toBe(parts[3]);
    expect(storedSealedSecret(sealed)).toBe(stored);
    expect(openNotifySecret(cipher, AGENT, stored)).toBe(secret);
  });

  it('a value that is not four parts is no sealed value', () => {
    expect(parseSealedSecret('k1:aaaa:bbbb')).toBeUndefined();
    expect(parseSealedSecret('k1:a:b:c:d')).toBeUndefined();
    expect(() => openNotifySecret(cipher, AGENT, 'whsec_plain')).toThrow('not a sealed value');
  });
});
