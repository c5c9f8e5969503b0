/**
 * `npm run vault:rotate`: re-encrypts every vault entry under the first key of VAULT_KEY.
 * Rotation: set VAULT_KEY=new:<key>,old:<key>, run this, then drop the old key.
 */
import type { DataSource } from 'typeorm';
import { notifySecretAad } from '../src/agents/notify-secret.js';
import { NotifySecretsRepository } from '../src/agents/notify-secrets.repository.js';
import type { CacheInvalidationBus } from '../src/common/cache/invalidation-bus.js';
import { loadSettings } from '../src/config/settings.js';
import { openDataSource } from '../src/database/data-source.js';
import { McpOAuthClientsRepository } from '../src/oauth/mcp-oauth-clients.repository.js';
import { OAuthRepository } from '../src/oauth/oauth.repository.js';
import { CredentialsRepository } from '../src/vault/credentials.repository.js';
import type { SealedRows, StaleSealed } from '../src/vault/sealed-rows.js';
import { credentialAad, VaultCipher } from '../src/vault/vault-cipher.js';

/** A bus that drops nothing: this process caches nothing; the tables' triggers tell the service's processes. */
const noCaches = { dropLocal: () => undefined } as unknown as CacheInvalidationBus;

/**
 * Each table of sealed values, through the repository of the feature that owns it, with its additional
 * data exactly as the service seals it (`scope`: the other bound column).
 */
function sealedTables(
  dataSource: DataSource,
): Array<{ table: string; rows: SealedRows; aad: (row: StaleSealed) => string }> {
  return [
    {
      table: 'site_credentials',
      rows: new CredentialsRepository(dataSource, noCaches),
      aad: (row) => credentialAad(row.id, row.scope),
    },
    { table: 'oauth_states', rows: new OAuthRepository(dataSource), aad: (row) => `oauth_states:${row.id}` },
    {
      table: 'mcp_oauth_clients',
      rows: new McpOAuthClientsRepository(dataSource),
      aad: (row) => `mcp_oauth_clients:${row.id}`,
    },
    { table: 'agents', rows: new NotifySecretsRepository(dataSource), aad: (row) => notifySecretAad(row.id) },
  ];
}

/** An entry that does not open: left as it is (its transaction rolls back), reported, the others go on. */
class Unreadable extends Error {}

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
    for (const { table, rows, aad } of sealedTables(dataSource)) {
      const stale = await rows.staleSealed(cipher.currentKeyId);
      let done = 0;
      const unreadable: string[] = [];
      for (const { id } of stale) {
        try {
          // Row by row under a lock, so a concurrent refresh never writes over a re-encrypted entry.
          const resealed = await rows.reseal(id, cipher.currentKeyId, (sealed, row) => {
            let plain: string;
            try {
              plain = cipher.open(sealed, aad(row));
            } catch (err) {
              throw new Unreadable((err as Error).message);
            }
            return cipher.seal(plain, aad(row));
          });
          done += resealed ? 1 : 0;
        } catch (err) {
          if (!(err instanceof Unreadable)) {
            throw err;
          }
          // A damaged entry (or one sealed under a key no longer listed) must not stop the others.
          unreadable.push(`${id}: ${err.message}`);
        }
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
