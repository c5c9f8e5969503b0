/**
 * `npm run vault:rotate`: re-encrypts every vault entry under the first key of VAULT_KEY.
 * Rotation: set VAULT_KEY=new:<key>,old:<key>, run this, then drop the old key.
 */
import { loadSettings } from '../src/config/settings.js';
import { openDataSource } from '../src/database/data-source.js';
import { credentialAad, VaultCipher } from '../src/vault/vault-cipher.js';

/** Each table's id and its additional data, exactly as the service seals it (`scope`: the other bound column). */
const TABLES = [
  {
    table: 'site_credentials',
    id: 'id',
    scope: 'site_id',
    aad: (id: string, siteId: string) => credentialAad(id, siteId),
  },
  { table: 'oauth_states', id: 'state_hash', scope: 'state_hash', aad: (id: string) => `oauth_states:${id}` },
] as const;

const USAGE = `usage: npm run vault:rotate
Re-encrypts every vault entry under the first key of VAULT_KEY (set VAULT_KEY=new:<key>,old:<key>,
run this, then drop the old key). Reads the service's settings; the database must be migrated.`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const settings = loadSettings();
  const cipher = new VaultCipher(settings);
  const dataSource = await openDataSource(settings);
  try {
    // Rows are opened with the additional data of the current schema: before the pending migrations
    // (the credential re-seal among them) every row would look unreadable.
    if (await dataSource.showMigrations()) {
      throw new Error('the database has pending migrations: start the service (or npm run migration:run) first');
    }
    for (const { table, id, scope, aad } of TABLES) {
      const stale: Array<{ id: string; scope: string }> = await dataSource.query(
        `SELECT ${id} AS id, ${scope} AS scope FROM ${table} WHERE key_id <> $1`,
        [cipher.currentKeyId],
      );
      let done = 0;
      const unreadable: string[] = [];
      for (const { id: rowId, scope: scopeId } of stale) {
        // Row by row under a lock, so a concurrent refresh never writes over a re-encrypted entry.
        await dataSource.transaction(async (em) => {
          const rows: Array<{ key_id: string; iv: Buffer; ciphertext: Buffer; auth_tag: Buffer }> = await em.query(
            `SELECT key_id, iv, ciphertext, auth_tag FROM ${table} WHERE ${id} = $1 AND key_id <> $2 FOR UPDATE`,
            [rowId, cipher.currentKeyId],
          );
          const row = rows[0];
          if (row === undefined) {
            return;
          }
          let plain: string;
          try {
            plain = cipher.open(
              { keyId: row.key_id, iv: row.iv, ciphertext: row.ciphertext, authTag: row.auth_tag },
              aad(rowId, scopeId),
            );
          } catch (err) {
            // A damaged entry (or one sealed under a key no longer listed) must not stop the others.
            unreadable.push(`${rowId}: ${(err as Error).message}`);
            return;
          }
          const sealed = cipher.seal(plain, aad(rowId, scopeId));
          await em.query(`UPDATE ${table} SET key_id = $1, iv = $2, ciphertext = $3, auth_tag = $4 WHERE ${id} = $5`, [
            sealed.keyId,
            sealed.iv,
            sealed.ciphertext,
            sealed.authTag,
            rowId,
          ]);
          done += 1;
        });
      }
      console.log(`${table}: re-encrypted ${done} of ${stale.length} entries under key "${cipher.currentKeyId}"`);
      if (unreadable.length > 0) {
        console.error(
          `${table}: ${unreadable.length} entries could not be opened and were left as they are:\n  ${unreadable.join('\n  ')}`,
        );
        process.exitCode = 1;
      }
    }
  } finally {
    await dataSource.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`vault rotation failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
