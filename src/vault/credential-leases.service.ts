import { Injectable } from '@nestjs/common';
import { CredentialLeasesRepository, type RefreshedPair, type RefreshWrite } from './credential-leases.repository.js';
import type { CredentialEntity } from './credential.entity.js';

export type { RefreshedPair, RefreshWrite } from './credential-leases.repository.js';

/**
 * The refresh lease on a credential row and the writes it fences (see CredentialLeasesRepository),
 * for OAuth's TokenRefreshService: the vault owns `site_credentials`, so only its repository
 * writes the rows.
 */
@Injectable()
export class CredentialLeasesService {
  constructor(private readonly leases: CredentialLeasesRepository) {}

  /** True when the lease is now `owner`'s: no live lease was held on this generation of the row. */
  claimLease(row: CredentialEntity, owner: string, leaseMs: number): Promise<boolean> {
    return this.leases.claimLease(row, owner, leaseMs);
  }

  releaseLease(row: CredentialEntity, owner: string): Promise<void> {
    return this.leases.releaseLease(row, owner);
  }

  /** The refreshed pair, written when the row is still at the generation refreshed; undefined when a newer one is stored. */
  writeRefreshed(row: CredentialEntity, pair: RefreshedPair): Promise<RefreshWrite | undefined> {
    return this.leases.writeRefreshed(row, pair);
  }

  /** Marks the row reauth_required while the lease is still `owner`'s on the generation refreshed. */
  markReauthRequired(row: CredentialEntity, owner: string): Promise<boolean> {
    return this.leases.markReauthRequired(row, owner);
  }
}
