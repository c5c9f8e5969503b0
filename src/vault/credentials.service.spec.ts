import { describe, expect, it, jest } from '@jest/globals';
import type { Settings } from '../config/settings.js';
import { ToolCallFailure } from '../sites/tool-failure.js';
import type { CredentialEntity } from './credential.entity.js';
import type { CredentialsRepository } from './credentials.repository.js';
import { CredentialsService } from './credentials.service.js';
import { VaultCipher } from './vault-cipher.js';

/** The service over a real cipher and a repository that keeps nothing: rows are the objects it builds. */
function service() {
  const cipher = new VaultCipher({ vaultKeys: [{ id: 'k1', key: Buffer.alloc(32, 7) }] } as unknown as Settings);
  const opens = jest.spyOn(cipher, 'open');
  let current: CredentialEntity | null = null;
  const repo = {
    create: (fields: Partial<CredentialEntity>) => ({ ...fields }) as CredentialEntity,
    insertIfAbsent: async (row: CredentialEntity) => {
      current = row;
      return true;
    },
    // As the repository rewrites a row under its lock: the given object is sealed again in place.
    rewriteLocked: async (_siteId: string, change: (row: CredentialEntity | null) => CredentialEntity | null) =>
      change(current),
  } as unknown as CredentialsRepository;
  return { credentials: new CredentialsService(repo, cipher), opens };
}

async function stored(credentials: CredentialsService, siteId: string, token: string): Promise<CredentialEntity> {
  return (await credentials.insertBearer(siteId, token, null))!;
}

describe('CredentialsService.open (decrypted once per row object)', () => {
  it('opens a row once: the same row object again answers without decrypting', async () => {
    const { credentials, opens } = service();
    const row = await stored(credentials, '00000000-0000-4000-8000-000000000001', 'token-a');
    expect(credentials.open(row)).toEqual({ kind: 'bearer', token: 'token-a' });
    expect(credentials.open(row)).toEqual({ kind: 'bearer', token: 'token-a' });
    expect(opens).toHaveBeenCalledTimes(1);
  });

  it("never answers another row's secret: each row opens its own, and another row's bytes do not open", async () => {
    const { credentials } = service();
    const a = await stored(credentials, '00000000-0000-4000-8000-00000000000a', 'token-a');
    const b = await stored(credentials, '00000000-0000-4000-8000-00000000000b', 'token-b');
    expect(credentials.open(a)).toEqual({ kind: 'bearer', token: 'token-a' });
    expect(credentials.open(b)).toEqual({ kind: 'bearer', token: 'token-b' });
    // A's sealed bytes on a copy of B's row (another site): bound to A's row, they do not open.
    const copied = { ...b, iv: a.iv, ciphertext: a.ciphertext, authTag: a.authTag } as CredentialEntity;
    expect(() => credentials.open(copied)).toThrow(ToolCallFailure);
  });

  it('a row sealed again in place (a replaced token) opens to its new secret, not the one opened before', async () => {
    const { credentials, opens } = service();
    const siteId = '00000000-0000-4000-8000-000000000002';
    const row = await stored(credentials, siteId, 'old-token');
    expect(credentials.open(row)).toEqual({ kind: 'bearer', token: 'old-token' });
    expect(await credentials.replaceWithBearer(siteId, 'new-token', null)).toBe(row);
    expect(credentials.open(row)).toEqual({ kind: 'bearer', token: 'new-token' });
    expect(opens).toHaveBeenCalledTimes(2);
  });

  it('answers a frozen secret: no caller can change what the next call is handed', async () => {
    const { credentials } = service();
    const row = await stored(credentials, '00000000-0000-4000-8000-000000000003', 'token-c');
    expect(Object.isFrozen(credentials.open(row))).toBe(true);
  });
});
