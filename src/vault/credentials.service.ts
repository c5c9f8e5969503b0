import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import * as oidc from 'openid-client';
import { type DataSource, type EntityManager } from 'typeorm';
import { OAuthConfigs } from '../oauth/oauth-config.js';
import type { SiteScope } from '../sites/scopes.js';
import { SiteNetworkError } from '../sites/site-http.js';
import { ToolCallFailure } from '../tools/tool-failure.js';
import { CredentialEntity, type CredentialSecret } from './credential.entity.js';
import type { SiteEntity } from './site.entity.js';
import { tokenHint, VaultCipher, VaultTamperedError } from './vault-cipher.js';

/** Refresh an OAuth access token this long before it expires. */
export const REFRESH_SKEW_MS = 60_000;

export interface UsableToken {
  token: string;
  /** The credential's generation the token belongs to (to tell a stale token after a 401). */
  generation: number;
  kind: CredentialEntity['kind'];
}

export interface OAuthTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresInSeconds: number | undefined;
  scopes: SiteScope[];
}

function aad(id: string): string {
  return `site_credentials:${id}`;
}

/**
 * Credentials of vault sites: sealing, reading, and OAuth refresh. A refresh holds a row lock on the
 * credential, so across every API and worker process exactly one refresh uses a (single-use)
 * refresh token; the others wait, then read the new pair.
 */
@Injectable()
export class CredentialsService {
  private readonly logger = new Logger('Credentials');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: VaultCipher,
    private readonly oauth: OAuthConfigs,
  ) {}

  private get repo() {
    return this.dataSource.getRepository(CredentialEntity);
  }

  findForSite(siteId: string): Promise<CredentialEntity | null> {
    return this.repo.findOneBy({ siteId });
  }

  /** Seals a secret into a new credential row, or over the given one (same id: the AAD stays bound). */
  private sealInto(row: CredentialEntity, secret: CredentialSecret, hintOf: string): void {
    const sealed = this.cipher.seal(JSON.stringify(secret), aad(row.id));
    row.keyId = sealed.keyId;
    row.iv = sealed.iv;
    row.ciphertext = sealed.ciphertext;
    row.authTag = sealed.authTag;
    row.tokenHint = tokenHint(hintOf);
  }

  open(row: CredentialEntity): CredentialSecret {
    try {
      return JSON.parse(this.cipher.open(row, aad(row.id))) as CredentialSecret;
    } catch (err) {
      if (err instanceof VaultTamperedError) {
        this.logger.error(`credential ${row.id} cannot be opened: ${err.message}`);
        throw new ToolCallFailure('unreadable_credential', 'The stored credential cannot be decrypted: store it again');
      }
      throw err;
    }
  }

  /** Stores a credential for a site with none; false when one exists already (TOKEN_EXISTS). */
  async insertBearer(siteId: string, token: string, expiresAt: Date | null): Promise<CredentialEntity | null> {
    const row = this.repo.create({
      id: randomUUID(),
      siteId,
      kind: 'bearer',
      status: 'active',
      expiresAt,
      scopes: null,
      generation: 1,
    });
    this.sealInto(row, { kind: 'bearer', token }, token);
    const inserted = await this.repo
      .createQueryBuilder()
      .insert()
      .values(row)
      .orIgnore() // ON CONFLICT DO NOTHING: the unique site_id decides who wins a race
      .returning('id')
      .execute();
    return inserted.raw.length === 1 ? row : null;
  }

  /** Replaces the stored credential with a bearer token; null when there is none (NOT_FOUND). */
  async replaceWithBearer(siteId: string, token: string, expiresAt: Date | null): Promise<CredentialEntity | null> {
    return this.dataSource.transaction(async (em) => {
      const row = await this.lockedRow(em, siteId);
      if (row === null) {
        return null;
      }
      this.sealInto(row, { kind: 'bearer', token }, token);
      Object.assign(row, { kind: 'bearer', status: 'active', expiresAt, scopes: null, generation: row.generation + 1 });
      return em.save(row);
    });
  }

  /** Stores the pair of a completed OAuth connection, replacing whatever the site had. */
  async storeOAuth(siteId: string, tokens: OAuthTokens): Promise<CredentialEntity> {
    return this.dataSource.transaction(async (em) => {
      const existing = await this.lockedRow(em, siteId);
      const row = existing ?? em.getRepository(CredentialEntity).create({ id: randomUUID(), siteId, generation: 0 });
      this.sealInto(
        row,
        { kind: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
        tokens.accessToken,
      );
      Object.assign(row, {
        kind: 'oauth2',
        status: 'active',
        scopes: tokens.scopes,
        expiresAt: expiryOf(tokens.expiresInSeconds),
        generation: row.generation + 1,
      });
      return em.save(row);
    });
  }

  async delete(siteId: string): Promise<boolean> {
    const result = await this.repo.delete({ siteId });
    return (result.affected ?? 0) > 0;
  }

  /**
   * A token to call the site with. OAuth tokens near expiry are refreshed first; `staleGeneration`
   * (after a 401) forces a refresh unless someone already replaced that generation.
   */
  async tokenFor(
    site: SiteEntity,
    staleGeneration?: number,
    prefetched?: CredentialEntity | null,
  ): Promise<UsableToken> {
    const row = prefetched !== undefined ? prefetched : await this.findForSite(site.id);
    if (row === null) {
      throw new ToolCallFailure(
        'no_credential',
        `No credential for ${site.manifest.name} in the vault: add a token or connect with OAuth first`,
      );
    }
    this.assertUsable(row, site);
    if (row.kind === 'bearer') {
      const secret = this.open(row) as Extract<CredentialSecret, { kind: 'bearer' }>;
      return { token: secret.token, generation: row.generation, kind: 'bearer' };
    }
    if (needsRefresh(row) || (staleGeneration !== undefined && row.generation === staleGeneration)) {
      return this.refresh(site, row.generation);
    }
    const secret = this.open(row) as Extract<CredentialSecret, { kind: 'oauth2' }>;
    return { token: secret.accessToken, generation: row.generation, kind: 'oauth2' };
  }

  private assertUsable(row: CredentialEntity, site: SiteEntity): void {
    if (row.status === 'reauth_required') {
      throw new ToolCallFailure(
        'reauth_required',
        `The connection to ${site.manifest.name} must be renewed: POST /api/vault/sites/${site.id}/oauth/start`,
      );
    }
    if (row.kind === 'bearer' && row.expiresAt !== null && row.expiresAt.getTime() <= Date.now()) {
      throw new ToolCallFailure(
        'unauthorized',
        `The stored token for ${site.manifest.name} has expired: update it with PATCH`,
      );
    }
  }

  /** Single-flight refresh across processes: the row lock serialises; latecomers reuse the result. */
  async refresh(site: SiteEntity, seenGeneration: number): Promise<UsableToken> {
    const outcome = await this.dataSource.transaction(async (em): Promise<UsableToken | ToolCallFailure> => {
      const row = await this.lockedRow(em, site.id);
      if (row === null) {
        return new ToolCallFailure('no_credential', `No credential for ${site.manifest.name} in the vault`);
      }
      if (row.status === 'reauth_required') {
        return new ToolCallFailure('reauth_required', `The connection to ${site.manifest.name} must be renewed`);
      }
      const secret = this.open(row);
      if (row.generation !== seenGeneration && !needsRefresh(row)) {
        // Another caller refreshed while we waited for the lock.
        return {
          token: secret.kind === 'oauth2' ? secret.accessToken : secret.token,
          generation: row.generation,
          kind: row.kind,
        };
      }
      if (secret.kind !== 'oauth2' || secret.refreshToken === null || site.manifest.auth.type !== 'oauth2') {
        return new ToolCallFailure(
          'unauthorized',
          `${site.manifest.name} refused the stored token and it cannot be refreshed`,
        );
      }
      let tokens: oidc.TokenEndpointResponse;
      try {
        tokens = await oidc.refreshTokenGrant(this.oauth.forManifest(site.manifest), secret.refreshToken);
      } catch (err) {
        if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
          // The grant is gone (revoked, expired, or replayed): keep the row, ask the user to reconnect.
          row.status = 'reauth_required';
          await em.save(row);
          this.logger.warn(`refresh of credential ${row.id} refused (invalid_grant); marked reauth_required`);
          return new ToolCallFailure(
            'reauth_required',
            `${site.manifest.name} refused the refresh: reconnect with OAuth`,
          );
        }
        throw refreshFailure(err, site);
      }
      this.sealInto(
        row,
        { kind: 'oauth2', accessToken: tokens.access_token, refreshToken: tokens.refresh_token ?? secret.refreshToken },
        tokens.access_token,
      );
      row.expiresAt = expiryOf(tokens.expires_in);
      row.generation += 1;
      await em.save(row);
      this.logger.log(`refreshed credential ${row.id} (generation ${row.generation})`);
      return { token: tokens.access_token, generation: row.generation, kind: 'oauth2' };
    });
    if (outcome instanceof ToolCallFailure) {
      throw outcome;
    }
    return outcome;
  }

  private lockedRow(em: EntityManager, siteId: string): Promise<CredentialEntity | null> {
    return em
      .getRepository(CredentialEntity)
      .createQueryBuilder('c')
      .setLock('pessimistic_write')
      .where('c.site_id = :siteId', { siteId })
      .getOne();
  }
}

function needsRefresh(row: CredentialEntity): boolean {
  return row.kind === 'oauth2' && row.expiresAt !== null && row.expiresAt.getTime() - REFRESH_SKEW_MS <= Date.now();
}

function expiryOf(expiresInSeconds: number | undefined): Date | null {
  return typeof expiresInSeconds === 'number' ? new Date(Date.now() + expiresInSeconds * 1000) : null;
}

function refreshFailure(err: unknown, site: SiteEntity): ToolCallFailure {
  if (err instanceof oidc.ResponseBodyError) {
    return new ToolCallFailure(
      err.status >= 500 ? 'server_error' : 'unauthorized',
      `${site.manifest.name} refused the token refresh: ${err.error_description ?? err.error}`,
    );
  }
  if (err instanceof SiteNetworkError) {
    return new ToolCallFailure(err.kind === 'timeout' ? 'timeout' : 'network', `Token refresh failed: ${err.message}`);
  }
  return new ToolCallFailure('network', `Token refresh at ${site.manifest.name} failed: ${(err as Error).message}`);
}
