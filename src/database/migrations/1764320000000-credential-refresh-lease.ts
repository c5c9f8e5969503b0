import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The refresh lease of a credential: who refreshes it and until when. A refresh used to hold a row
 * lock (and a pool connection) across the site's token request; the lease is claimed by one UPDATE
 * and the request runs outside any transaction.
 */
export class CredentialRefreshLease1764320000000 implements MigrationInterface {
  name = 'CredentialRefreshLease1764320000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE site_credentials ADD COLUMN refresh_lease_owner uuid`);
    await q.query(`ALTER TABLE site_credentials ADD COLUMN refresh_lease_until timestamptz(3)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE site_credentials DROP COLUMN refresh_lease_until`);
    await q.query(`ALTER TABLE site_credentials DROP COLUMN refresh_lease_owner`);
  }
}
