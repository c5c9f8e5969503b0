import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { SiteScope } from '../sites/scopes.js';
import { needsReconnecting, notConnected, ToolCallFailure } from '../sites/tool-failure.js';
import type { CredentialEntity, CredentialSecret } from './credential.entity.js';
import { CredentialsRepository } from './credentials.repository.js';
import type { SiteEntity } from './site.entity.js';
import { credentialAad, tokenHint, VaultCipher, VaultTamperedError } from './vault-cipher.js';

export interface OAuthTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresInSeconds: number | undefined;
  scopes: SiteScope[];
}

/** Secrets opened, by the row object they were opened from (see CredentialsService.open). */
const opened = new WeakMap<CredentialEntity, { ciphertext: Buffer; keyId: string; secret: CredentialSecret }>();

/**
 * Credentials of vault sites: sealing, reading and storing them. Refreshing an OAuth pair (single-flight
 * across processes, rotation) is TokenRefreshService's, in oauth/.
 */
/** Called once a credential was stored for a site (MCP servers list their tools with it). */
export type CredentialStoredListener = (siteId: string) => Promise<void>;

@Injectable()
export class CredentialsService {
  private readonly logger = new Logger('Credentials');
  private readonly storedListeners: CredentialStoredListener[] = [];

  constructor(
    private readonly repo: CredentialsRepository,
    private readonly cipher: VaultCipher,
  ) {}

  /**
   * Registers what runs right after a credential is stored (bearer token POST/PATCH, a completed OAuth
   * connection): awaited, best effort (a failure is logged, never undoes the store).
   */
  onStored(listener: CredentialStoredListener): void {
    this.storedListeners.push(listener);
  }

  private async afterStore(siteId: string): Promise<void> {
    for (const listener of this.storedListeners) {
      try {
        await listener(siteId);
      } catch (err) {
        this.logger.warn(`after storing the credential of site ${siteId}: ${(err as Error).message}`);
      }
    }
  }

  /** Records the scope a server asked for in a 403 `insufficient_scope` (the next OAuth start asks for it). */
  async setRequiredScope(siteId: string, scope: string | null): Promise<void> {
    await this.repo.setRequiredScope(siteId, scope);
  }

  findForSite(siteId: string): Promise<CredentialEntity | null> {
    return this.repo.findForSite(siteId);
  }

  /** Seals a secret into a new credential row, or over the given one (same id: the AAD stays bound). */
  private sealInto(row: CredentialEntity, secret: CredentialSecret, hintOf: string): void {
    const sealed = this.cipher.seal(JSON.stringify(secret), credentialAad(row.id, row.siteId));
    row.keyId = sealed.keyId;
    row.iv = sealed.iv;
    row.ciphertext = sealed.ciphertext;
    row.authTag = sealed.authTag;
    row.tokenHint = tokenHint(hintOf);
  }

  /**
   * The row's secret. Opened once per row object: the site cache hands every call the same row until
   * a change of the credential (or of its site) drops it, and the next read is a new object, opened
   * again; the secret is kept only while the row object lives and only for the sealed bytes it was
   * opened from (a row sealed again in place is opened again). Frozen: callers share it.
   */
  open(row: CredentialEntity): CredentialSecret {
    const known = opened.get(row);
    if (known !== undefined && known.ciphertext === row.ciphertext && known.keyId === row.keyId) {
      return known.secret;
    }
    const secret = this.openSealed(row);
    opened.set(row, { ciphertext: row.ciphertext, keyId: row.keyId, secret });
    return secret;
  }

  private openSealed(row: CredentialEntity): CredentialSecret {
    try {
      return Object.freeze(JSON.parse(this.cipher.open(row, credentialAad(row.id, row.siteId))) as CredentialSecret);
    } catch (err) {
      if (err instanceof VaultTamperedError) {
        this.logger.error(`credential ${row.id} cannot be opened: ${err.message}`);
        throw new ToolCallFailure('unreadable_credential', 'The stored credential cannot be decrypted: store it again');
      }
      throw err;
    }
  }

  /**
   * Whether the service can renew the credential itself: an OAuth grant that came with a refresh token.
   * A row that cannot be opened is not (it must be stored again anyway).
   */
  refreshable(row: CredentialEntity): boolean {
    if (row.kind !== 'oauth2') {
      return false;
    }
    try {
      const secret = this.open(row);
      return secret.kind === 'oauth2' && secret.refreshToken !== null;
    } catch {
      return false;
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
    // ON CONFLICT DO NOTHING: the unique site_id decides who wins a race.
    if (!(await this.repo.insertIfAbsent(row))) {
      return null;
    }
    await this.afterStore(siteId);
    return row;
  }

  /** Replaces the stored credential with a bearer token; null when there is none (NOT_FOUND). */
  async replaceWithBearer(siteId: string, token: string, expiresAt: Date | null): Promise<CredentialEntity | null> {
    const replaced = await this.repo.rewriteLocked(siteId, (row) => {
      if (row === null) {
        return null;
      }
      this.sealInto(row, { kind: 'bearer', token }, token);
      Object.assign(row, {
        kind: 'bearer',
        status: 'active',
        expiresAt,
        scopes: null,
        requiredScope: null,
        generation: row.generation + 1,
        refreshLeaseOwner: null,
        refreshLeaseUntil: null,
      });
      return row;
    });
    if (replaced !== null) {
      await this.afterStore(siteId);
    }
    return replaced;
  }

  /** Stores the pair of a completed OAuth connection, replacing whatever the site had. */
  async storeOAuth(siteId: string, tokens: OAuthTokens): Promise<CredentialEntity> {
    const stored = await this.repo.rewriteLocked(siteId, (existing) => {
      const row = existing ?? this.repo.create({ id: randomUUID(), siteId, generation: 0 });
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
        refreshLeaseOwner: null,
        refreshLeaseUntil: null,
        // The grant answers the step-up a 403 insufficient_scope asked for.
        requiredScope: null,
      });
      return row;
    });
    await this.afterStore(siteId);
    return stored!;
  }

  async delete(siteId: string): Promise<boolean> {
    return this.repo.delete(siteId);
  }

  /**
   * The site's credential row when a call can be made with it: none (not connected), re-authorisation needed
   * and an expired bearer token are refused here, before the call takes an outgoing slot.
   */
  async usableRow(site: SiteEntity, prefetched?: CredentialEntity | null): Promise<CredentialEntity> {
    const row = prefetched !== undefined ? prefetched : await this.findForSite(site.id);
    if (row === null) {
      throw notConnected(site.manifest.name);
    }
    this.assertUsable(row, site);
    return row;
  }

  private assertUsable(row: CredentialEntity, site: SiteEntity): void {
    if (row.status === 'reauth_required') {
      throw needsReconnecting(site.manifest.name);
    }
    if (row.kind === 'bearer' && row.expiresAt !== null && row.expiresAt.getTime() <= Date.now()) {
      throw new ToolCallFailure(
        'unauthorized',
        `The stored token for ${site.manifest.name} has expired: store a new one`,
      );
    }
  }
}

/** When a token that lasts `expiresInSeconds` (a token endpoint's `expires_in`) expires; null when unknown. */
export function expiryOf(expiresInSeconds: number | undefined): Date | null {
  return typeof expiresInSeconds === 'number' ? new Date(Date.now() + expiresInSeconds * 1000) : null;
}
