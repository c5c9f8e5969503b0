import { Logger } from '@nestjs/common';
import { type MigrationInterface, type QueryRunner } from 'typeorm';
import type { Settings } from '../../config/settings.js';
import { credentialAad, legacyCredentialAad, type Sealed, VaultCipher } from '../../vault/vault-cipher.js';
import { MigrationRefusedError } from '../migration-refused.error.js';

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
 * settings of the process that runs the migrations (the same VAULT_KEY the service uses).
 *
 * After this migration the service opens credentials only with the new additional data, so a row left
 * behind would never open again, even once its key is back. Hence all or nothing: when any row does
 * not open (its key is not in VAULT_KEY, or its bytes are damaged) the migration throws, its
 * transaction rolls back (migrations run one transaction each, under the migration advisory lock) and
 * the process refuses to start, naming the missing key ids; the operator adds them and starts again.
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
  const known = new Set(settings.vaultKeys.map((k) => k.id));
  const rows: SealedRow[] = await q.query(
    `SELECT id, site_id, key_id, iv, ciphertext, auth_tag FROM site_credentials ORDER BY id FOR UPDATE`,
  );
  const resealed: Array<{ row: SealedRow; sealed: Sealed }> = [];
  const missingKeys = new Map<string, number>();
  const damaged: string[] = [];
  let already = 0;
  for (const row of rows) {
    const stored: Sealed = { keyId: row.key_id, iv: row.iv, ciphertext: row.ciphertext, authTag: row.auth_tag };
    if (!known.has(row.key_id)) {
      missingKeys.set(row.key_id, (missingKeys.get(row.key_id) ?? 0) + 1);
      continue;
    }
    const plain = tryOpen(cipher, stored, from(row));
    if (plain !== null) {
      resealed.push({ row, sealed: cipher.seal(plain, to(row)) });
    } else if (tryOpen(cipher, stored, to(row)) !== null) {
      already += 1; // sealed the new way already (e.g. stored again after a down migration): nothing to do
    } else {
      damaged.push(row.id);
    }
  }
  if (missingKeys.size > 0 || damaged.length > 0) {
    // Before any UPDATE, so a refusal leaves every row as it was even without the rollback.
    throw new MigrationRefusedError(refusal(missingKeys, damaged));
  }
  for (const { row, sealed } of resealed) {
    await q.query(`UPDATE site_credentials SET key_id = $2, iv = $3, ciphertext = $4, auth_tag = $5 WHERE id = $1`, [
      row.id,
      sealed.keyId,
      sealed.iv,
      sealed.ciphertext,
      sealed.authTag,
    ]);
  }
  logger.log(
    `site_credentials: re-sealed ${resealed.length} of ${rows.length} entries with their site in the additional data` +
      (already > 0 ? ` (${already} were sealed that way already)` : ''),
  );
}

function tryOpen(cipher: VaultCipher, sealed: Sealed, aad: string): string | null {
  try {
    return cipher.open(sealed, aad);
  } catch {
    return null;
  }
}

/** What the operator reads when the service refuses to start: counts and key ids, never key material. */
function refusal(missingKeys: Map<string, number>, damaged: string[]): string {
  const lines = [
    'Migration CredentialSiteAad1764320100000 refused: some vault credentials cannot be opened, and re-sealing the',
    'others without them would make them unreadable for good. Nothing was changed.',
  ];
  if (missingKeys.size > 0) {
    const total = [...missingKeys.values()].reduce((a, b) => a + b, 0);
    const ids = [...missingKeys].map(([id, n]) => `"${id}" (${n} ${n === 1 ? 'row' : 'rows'})`).join(', ');
    lines.push(
      `${total} ${total === 1 ? 'row is' : 'rows are'} sealed under vault key ids that VAULT_KEY does not list: ${ids}.`,
      'Add those keys to VAULT_KEY after the current one (VAULT_KEY=<current-id>:<key>,<old-id>:<key>) and start again;',
      'afterwards `npm run vault:rotate` re-encrypts them under the current key and the old key can be dropped.',
    );
  }
  if (damaged.length > 0) {
    lines.push(
      `${damaged.length} ${damaged.length === 1 ? 'row fails' : 'rows fail'} authentication under a listed key (damaged or`,
      `tampered): site_credentials ids ${damaged.join(', ')}. Restore them from a backup, or delete them (their users`,
      'store the credential again) and start again.',
    );
  }
  return lines.join('\n');
}
