import { Logger } from '@nestjs/common';
import { type MigrationInterface, type QueryRunner } from 'typeorm';
import type { Settings } from '../../config/settings.js';
import { credentialAad, legacyCredentialAad, VaultCipher } from '../../vault/vault-cipher.js';

interface SealedRow {
  id: string;
  site_id: string;
  key_id: string;
  iv: Buffer;
  ciphertext: Buffer;
  auth_tag: Buffer;
}

type Aad = (row: SealedRow) => string;

/**
 * Re-seals every credential so that its additional data names its site as well as its row
 * (`site_credentials:<id>:<siteId>`): a row moved to another site no longer opens. Re-sealing needs the
 * vault keys, which TypeORM cannot hand a migration class, so the class is made here over the
 * settings of the process that runs the migrations (the same VAULT_KEY the service uses). Rows that do
 * not open under the old additional data (a key no longer listed, damaged bytes) are left as they
 * are: they did not open before either, and a call with them fails as unreadable.
 */
export function credentialSiteAadMigration(settings: Pick<Settings, 'vaultKeys'>): new () => MigrationInterface {
  return class CredentialSiteAad1764320100000 implements MigrationInterface {
    name = 'CredentialSiteAad1764320100000';

    async up(q: QueryRunner): Promise<void> {
      await reseal(
        q,
        settings,
        (row) => legacyCredentialAad(row.id),
        (row) => credentialAad(row.id, row.site_id),
      );
    }

    async down(q: QueryRunner): Promise<void> {
      await reseal(
        q,
        settings,
        (row) => credentialAad(row.id, row.site_id),
        (row) => legacyCredentialAad(row.id),
      );
    }
  };
}

async function reseal(q: QueryRunner, settings: Pick<Settings, 'vaultKeys'>, from: Aad, to: Aad): Promise<void> {
  const logger = new Logger('Migrations');
  const cipher = new VaultCipher(settings as Settings);
  const rows: SealedRow[] = await q.query(
    `SELECT id, site_id, key_id, iv, ciphertext, auth_tag FROM site_credentials ORDER BY id FOR UPDATE`,
  );
  let done = 0;
  const unreadable: string[] = [];
  for (const row of rows) {
    let plain: string;
    try {
      plain = cipher.open(
        { keyId: row.key_id, iv: row.iv, ciphertext: row.ciphertext, authTag: row.auth_tag },
        from(row),
      );
    } catch {
      unreadable.push(row.id);
      continue;
    }
    const sealed = cipher.seal(plain, to(row));
    await q.query(`UPDATE site_credentials SET key_id = $2, iv = $3, ciphertext = $4, auth_tag = $5 WHERE id = $1`, [
      row.id,
      sealed.keyId,
      sealed.iv,
      sealed.ciphertext,
      sealed.authTag,
    ]);
    done += 1;
  }
  logger.log(`site_credentials: re-sealed ${done} of ${rows.length} entries with their site in the additional data`);
  if (unreadable.length > 0) {
    logger.warn(
      `site_credentials: ${unreadable.length} entries could not be opened and were left as they are: ${unreadable.join(', ')}`,
    );
  }
}
