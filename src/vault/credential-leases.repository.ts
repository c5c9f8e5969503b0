import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import type { CredentialEntity } from './credential.entity.js';
import type { Sealed } from './vault-cipher.js';

/** The refreshed pair's columns, sealed (see CredentialLeasesRepository.writeRefreshed). */
export interface RefreshedPair {
  sealed: Sealed;
  tokenHint: string;
  expiresAt: Date | null;
}

/** What the refresh's final write found: the generation it wrote and who held the lease just before. */
export interface RefreshWrite {
  generation: number;
  prevOwner: string | null;
}

/**
 * The SQL of the single-flight refresh on `site_credentials`: raw statements, each one atomic (the
 * lease claim, its release, the generation-fenced write, the reauth mark), so that two processes can
 * never both act on one refresh token. The vault owns the table; OAuth's TokenRefreshService drives
 * the refresh through CredentialLeasesService.
 */
@Injectable()
export class CredentialLeasesRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly caches: CacheInvalidationBus,
  ) {}

  /** One atomic UPDATE: the lease is ours when no live lease is held on this generation of the row. */
  async claimLease(row: CredentialEntity, owner: string, leaseMs: number): Promise<boolean> {
    const claimed = await this.dataSource.query(
      `UPDATE site_credentials
          SET refresh_lease_owner = $2, refresh_lease_until = now() + make_interval(secs => $3)
        WHERE id = $1 AND generation = $4 AND status = 'active'
          AND (refresh_lease_until IS NULL OR refresh_lease_until < now())
        RETURNING id`,
      [row.id, owner, leaseMs / 1000, row.generation],
    );
    return rowsOf(claimed).length === 1;
  }

  async releaseLease(row: CredentialEntity, owner: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE site_credentials SET refresh_lease_owner = NULL, refresh_lease_until = NULL
        WHERE id = $1 AND refresh_lease_owner = $2`,
      [row.id, owner],
    );
  }

  /**
   * Writes the refreshed pair when the row is still at the generation refreshed, whoever holds the
   * lease; undefined when a newer generation is stored. `prevOwner` is the lease owner before this
   * statement, to tell whether the lease was still the caller's.
   */
  async writeRefreshed(row: CredentialEntity, pair: RefreshedPair): Promise<RefreshWrite | undefined> {
    const written = rowsOf<{ generation: number; prev_owner: string | null }>(
      await this.dataSource.query(
        `UPDATE site_credentials c
          SET key_id = $3, iv = $4, ciphertext = $5, auth_tag = $6, token_hint = $7, expires_at = $8, status = 'active',
              generation = c.generation + 1, refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = now()
         FROM (SELECT refresh_lease_owner FROM site_credentials WHERE id = $1) prev
        WHERE c.id = $1 AND c.generation = $2
        RETURNING c.generation, prev.refresh_lease_owner AS prev_owner`,
        [
          row.id,
          row.generation,
          pair.sealed.keyId,
          pair.sealed.iv,
          pair.sealed.ciphertext,
          pair.sealed.authTag,
          pair.tokenHint,
          pair.expiresAt,
        ],
      ),
    );
    // The table's trigger tells every process; this one drops the site's cached pair now.
    this.caches.dropLocal('site', row.siteId);
    const first = written[0];
    return first === undefined ? undefined : { generation: first.generation, prevOwner: first.prev_owner };
  }

  /** Marks the row reauth_required while the lease is still the caller's on the generation refreshed. */
  async markReauthRequired(row: CredentialEntity, owner: string): Promise<boolean> {
    const marked = rowsOf(
      await this.dataSource.query(
        `UPDATE site_credentials
            SET status = 'reauth_required', refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = now()
          WHERE id = $1 AND refresh_lease_owner = $2 AND generation = $3
          RETURNING id`,
        [row.id, owner, row.generation],
      ),
    );
    this.caches.dropLocal('site', row.siteId);
    return marked.length > 0;
  }
}

/** An UPDATE … RETURNING through DataSource.query answers [rows, count] with the postgres driver. */
function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}
