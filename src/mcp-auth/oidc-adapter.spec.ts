import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { standIn } from '../common/testing/stand-in.js';
import type { McpAuthRepository } from './mcp-auth.repository.js';
import { ArtifactStore } from './oidc-adapter.js';
import { FakeMcpAuthRepository } from './testing/fake-mcp-auth.repository.js';

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

function storeOver(fake: FakeMcpAuthRepository): ArtifactStore {
  return new ArtifactStore(standIn<McpAuthRepository>(fake), () => undefined);
}

describe('the authorization server adapter over mcp_authorization_state', () => {
  it('keys a token by its SHA-256 and keeps no copy of it; reading it back restores the id', async () => {
    const fake = new FakeMcpAuthRepository();
    const adapter = storeOver(fake).adapterFor('RefreshToken');
    await adapter.upsert('secret-token-value', { jti: 'secret-token-value', grantId: 'g1', kind: 'RefreshToken' }, 60);
    const [row] = [...fake.rows.values()];
    expect(row.id).toBe(sha256('secret-token-value'));
    expect(JSON.stringify(row.payload)).not.toContain('secret-token-value');
    expect(row.grantId).toBe('g1');
    expect(await adapter.find('secret-token-value')).toEqual({
      jti: 'secret-token-value',
      grantId: 'g1',
      kind: 'RefreshToken',
    });
    expect(await adapter.find('another-value')).toBeUndefined();
  });

  it('keeps the id of a grant, an interaction or a client as it is (no credential), and finds an interaction by uid', async () => {
    const fake = new FakeMcpAuthRepository();
    const adapter = storeOver(fake).adapterFor('Interaction');
    await adapter.upsert('uid-1', { jti: 'uid-1', uid: 'uid-1', kind: 'Interaction' }, 60);
    expect([...fake.rows.values()][0].id).toBe('uid-1');
    expect(await adapter.findByUid('uid-1')).toMatchObject({ jti: 'uid-1' });
  });

  it('marks a consumed token (oidc-provider refuses it and revokes its grant on reuse)', async () => {
    const fake = new FakeMcpAuthRepository();
    const adapter = storeOver(fake).adapterFor('AuthorizationCode');
    await adapter.upsert('code-1', { jti: 'code-1', grantId: 'g1' }, 60);
    expect((await adapter.find('code-1'))?.consumed).toBeUndefined();
    await adapter.consume('code-1');
    expect((await adapter.find('code-1'))?.consumed).toEqual(expect.any(Number));
  });

  it("revokes by grant only the model's own rows, destroys by id, and never answers an expired row", async () => {
    const fake = new FakeMcpAuthRepository();
    const store = storeOver(fake);
    const access = store.adapterFor('AccessToken');
    const refresh = store.adapterFor('RefreshToken');
    await access.upsert('a1', { grantId: 'g1' }, 60);
    await access.upsert('a2', { grantId: 'g2' }, 60);
    await refresh.upsert('r1', { grantId: 'g1' }, 60);
    await access.revokeByGrantId('g1');
    expect(await access.find('a1')).toBeUndefined();
    expect(await access.find('a2')).toBeDefined();
    expect(await refresh.find('r1')).toBeDefined();
    await refresh.destroy('r1');
    expect(await refresh.find('r1')).toBeUndefined();
    await access.upsert('gone', { grantId: 'g3' }, 60);
    fake.rows.get(`AccessToken:${sha256('gone')}`)!.expiresAt = new Date(Date.now() - 1000);
    expect(await access.find('gone')).toBeUndefined();
  });

  it('sweeps expired rows on a write at most once a minute per process', async () => {
    const fake = new FakeMcpAuthRepository();
    const adapter = storeOver(fake).adapterFor('Session');
    await adapter.upsert('s1', {}, 60);
    await adapter.upsert('s2', {}, 60);
    expect(fake.sweeps).toBe(1);
  });
});
