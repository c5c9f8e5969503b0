import { randomUUID } from 'node:crypto';
import { needsReconnecting, notConnected } from '../../sites/tool-failure.js';
import type { CredentialEntity, CredentialSecret } from '../../vault/credential.entity.js';
import { type CredentialsService, expiryOf, type OAuthTokens } from '../../vault/credentials.service.js';
import type { SiteEntity } from '../../vault/site.entity.js';
import { credentialAad, tokenHint, type VaultCipher } from '../../vault/vault-cipher.js';
import type { CredentialLeasesService, RefreshedPair, RefreshWrite } from '../../vault/credential-leases.service.js';

/**
 * The `site_credentials` rows in memory, sealed with the real cipher (so what the services seal is
 * what they open), shared by the fake credentials service and the fake refresh repository.
 */
export class FakeCredentialStore {
  readonly rows = new Map<string, CredentialEntity>();
  now = (): number => Date.now();

  constructor(readonly cipher: VaultCipher) {}

  /** Stores a credential for the site (a new generation), as the vault would. */
  put(siteId: string, secret: CredentialSecret, fields: Partial<CredentialEntity> = {}): CredentialEntity {
    const existing = this.rows.get(siteId);
    const id = existing?.id ?? randomUUID();
    const token = secret.kind === 'oauth2' ? secret.accessToken : secret.token;
    const row = {
      id,
      siteId,
      kind: secret.kind,
      status: 'active',
      ...this.cipher.seal(JSON.stringify(secret), credentialAad(id, siteId)),
      tokenHint: tokenHint(token),
      expiresAt: null,
      scopes: null,
      generation: (existing?.generation ?? 0) + 1,
      refreshLeaseOwner: null,
      refreshLeaseUntil: null,
      createdAt: new Date(this.now()),
      updatedAt: new Date(this.now()),
      ...fields,
    } as CredentialEntity;
    this.rows.set(siteId, row);
    return row;
  }

  secretOf(siteId: string): CredentialSecret {
    const row = this.rows.get(siteId)!;
    return JSON.parse(this.cipher.open(row, credentialAad(row.id, row.siteId))) as CredentialSecret;
  }
}

/** The part of the vault's credentials the OAuth flow and the refresh use. */
export class FakeCredentialsService implements Pick<
  CredentialsService,
  'storeOAuth' | 'usableRow' | 'open' | 'findForSite'
> {
  constructor(private readonly store: FakeCredentialStore) {}

  async storeOAuth(siteId: string, tokens: OAuthTokens): Promise<CredentialEntity> {
    return this.store.put(
      siteId,
      { kind: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
      { scopes: tokens.scopes, expiresAt: expiryOf(tokens.expiresInSeconds) },
    );
  }

  async findForSite(siteId: string): Promise<CredentialEntity | null> {
    const row = this.store.rows.get(siteId);
    return row === undefined ? null : { ...row };
  }

  async usableRow(site: SiteEntity, prefetched?: CredentialEntity | null): Promise<CredentialEntity> {
    const row = prefetched !== undefined ? prefetched : await this.findForSite(site.id);
    if (row === null) {
      throw notConnected(site.manifest.name);
    }
    if (row.status === 'reauth_required') {
      throw needsReconnecting(site.manifest.name);
    }
    return row;
  }

  open(row: CredentialEntity): CredentialSecret {
    return JSON.parse(this.store.cipher.open(row, credentialAad(row.id, row.siteId))) as CredentialSecret;
  }
}

type Used = 'claimLease' | 'releaseLease' | 'writeRefreshed' | 'markReauthRequired';

/** The vault's refresh lease over the same rows: lease claim, release, generation-fenced write, reauth mark. */
export class FakeCredentialLeases implements Pick<CredentialLeasesService, Used> {
  readonly claims: string[] = [];

  constructor(private readonly store: FakeCredentialStore) {}

  private current(row: CredentialEntity): CredentialEntity | undefined {
    const stored = this.store.rows.get(row.siteId);
    return stored?.id === row.id ? stored : undefined;
  }

  async claimLease(row: CredentialEntity, owner: string, leaseMs: number): Promise<boolean> {
    const stored = this.current(row);
    const now = this.store.now();
    if (
      stored === undefined ||
      stored.generation !== row.generation ||
      stored.status !== 'active' ||
      (stored.refreshLeaseUntil !== null && stored.refreshLeaseUntil.getTime() >= now)
    ) {
      return false;
    }
    stored.refreshLeaseOwner = owner;
    stored.refreshLeaseUntil = new Date(now + leaseMs);
    this.claims.push(owner);
    return true;
  }

  async releaseLease(row: CredentialEntity, owner: string): Promise<void> {
    const stored = this.current(row);
    if (stored?.refreshLeaseOwner === owner) {
      stored.refreshLeaseOwner = null;
      stored.refreshLeaseUntil = null;
    }
  }

  async writeRefreshed(row: CredentialEntity, pair: RefreshedPair): Promise<RefreshWrite | undefined> {
    const stored = this.current(row);
    if (stored === undefined || stored.generation !== row.generation) {
      return undefined;
    }
    const prevOwner = stored.refreshLeaseOwner;
    Object.assign(stored, {
      ...pair.sealed,
      tokenHint: pair.tokenHint,
      expiresAt: pair.expiresAt,
      status: 'active',
      generation: stored.generation + 1,
      refreshLeaseOwner: null,
      refreshLeaseUntil: null,
    });
    return { generation: stored.generation, prevOwner };
  }

  async markReauthRequired(row: CredentialEntity, owner: string): Promise<boolean> {
    const stored = this.current(row);
    if (stored === undefined || stored.refreshLeaseOwner !== owner || stored.generation !== row.generation) {
      return false;
    }
    Object.assign(stored, { status: 'reauth_required', refreshLeaseOwner: null, refreshLeaseUntil: null });
    return true;
  }
}
