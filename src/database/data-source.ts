import { Logger } from '@nestjs/common';
import { DataSource, type DataSourceOptions, type EntitySchema, type QueryRunner } from 'typeorm';
import { effectiveDatabaseUrl, type Settings } from '../config/settings.js';
import { Initial1763769600000 } from './migrations/1763769600000-initial.js';
import { Vault1763856000000 } from './migrations/1763856000000-vault.js';
import { AgentsRuns1763942400000 } from './migrations/1763942400000-agents-runs.js';
import { Chat1764028800000 } from './migrations/1764028800000-chat.js';
import { Plans1764115200000 } from './migrations/1764115200000-plans.js';
import { ChargeFunction1764201600000 } from './migrations/1764201600000-charge-function.js';
import { CredentialRefreshLease1764320000000 } from './migrations/1764320000000-credential-refresh-lease.js';
import { RunArchives1764400000000 } from './migrations/1764400000000-run-archives.js';
import { Billing1764500000000 } from './migrations/1764500000000-billing.js';
import { CacheInvalidation1764600000000 } from './migrations/1764600000000-cache-invalidation.js';
import { ChatSessionsByUser1764600000200 } from './migrations/1764600000200-chat-sessions-by-user.js';
import { RateLimitsUnlogged1764600000300 } from './migrations/1764600000300-rate-limits-unlogged.js';
import { RateLimitsExpireIndex1765000021200 } from './migrations/1765000021200-rate-limits-expire-index.js';
import { SiteCacheInvalidation1764600000400 } from './migrations/1764600000400-site-cache-invalidation.js';
import { CreditsCacheUpdate1764600000500 } from './migrations/1764600000500-credits-cache-update.js';
import { RequestPathIndexes1764700000000 } from './migrations/1764700000000-request-path-indexes.js';
import { CreditHolds1764800000000 } from './migrations/1764800000000-credit-holds.js';
import { WorkspaceInvitations1764800000100 } from './migrations/1764800000100-workspace-invitations.js';
import { CreditRulesInCode1764900000000 } from './migrations/1764900000000-credit-rules-in-code.js';
import { ChatMessageParts1764960000000 } from './migrations/1764960000000-chat-message-parts.js';
import { WebhookDeliveries1765000017600 } from './migrations/1765000017600-webhook-deliveries.js';
import { McpSites1765000017700 } from './migrations/1765000017700-mcp-sites.js';
import { McpAuthorizationServer1765000019000 } from './migrations/1765000019000-mcp-authorization-server.js';
import { ApprovalsNotifications1765000020000 } from './migrations/1765000020000-approvals-notifications.js';
import { RunReconcile1765000021000 } from './migrations/1765000021000-run-reconcile.js';
import { BillingReliability1765000021100 } from './migrations/1765000021100-billing-reliability.js';
import { ChatModelBrief1765000021300 } from './migrations/1765000021300-chat-model-brief.js';
import { RunToolSets1765000021400 } from './migrations/1765000021400-run-tool-sets.js';
import { RunsUnstarted1765000023000 } from './migrations/1765000023000-runs-unstarted.js';
import { ScopeSitesCache1765000024000 } from './migrations/1765000024000-scope-sites-cache.js';
import { DB_CONNECT_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS } from '../common/database/pool-limits.js';
import { DatabaseLogger } from './database-logger.js';

/** Every migration, oldest first. */
export const MIGRATIONS = [
  Initial1763769600000,
  Vault1763856000000,
  AgentsRuns1763942400000,
  Chat1764028800000,
  Plans1764115200000,
  ChargeFunction1764201600000,
  CredentialRefreshLease1764320000000,
  RunArchives1764400000000,
  Billing1764500000000,
  CacheInvalidation1764600000000,
  ChatSessionsByUser1764600000200,
  RateLimitsUnlogged1764600000300,
  SiteCacheInvalidation1764600000400,
  CreditsCacheUpdate1764600000500,
  RequestPathIndexes1764700000000,
  CreditHolds1764800000000,
  WorkspaceInvitations1764800000100,
  CreditRulesInCode1764900000000,
  ChatMessageParts1764960000000,
  WebhookDeliveries1765000017600,
  McpSites1765000017700,
  McpAuthorizationServer1765000019000,
  ApprovalsNotifications1765000020000,
  RunReconcile1765000021000,
  BillingReliability1765000021100,
  RateLimitsExpireIndex1765000021200,
  ChatModelBrief1765000021300,
  RunToolSets1765000021400,
  RunsUnstarted1765000023000,
  ScopeSitesCache1765000024000,
];

/** Arbitrary constant: the advisory lock that serialises migrations across processes. */
export const MIGRATION_LOCK_KEY = 4_242_001;

/** An entity class (or schema) for a data source's `entities`. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for entity classes
export type EntityClass = Function | EntitySchema;

/**
 * The connection, pool and migrations. The entities come from the caller, so this folder imports no
 * feature: the Nest data source loads each feature module's `TypeOrmModule.forFeature` list
 * (`autoLoadEntities`, see DatabaseModule); a script that needs the entities (migration:generate)
 * passes the list of src/entities.ts. Running migrations needs none (they are SQL).
 */
export function dataSourceOptions(settings: Settings, entities: EntityClass[] = []): DataSourceOptions {
  return {
    type: 'postgres',
    url: effectiveDatabaseUrl(settings),
    entities,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    // Failed statements are logged without their parameters or the values the error quotes (a logger
    // object of our own: TypeORM then ignores its `logging` option).
    logger: new DatabaseLogger(),
    extra: {
      // Per process: every API and worker has a pool of its own, and together they must stay under
      // PostgreSQL's max_connections (or a pooler's limit) when the service is scaled out.
      max: settings.databasePoolMax,
      // Both bound every query, the token refresh's final write included (its lease is sized from them).
      connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
      // An API query never waits forever on a dead database: it fails and the caller answers an error.
      query_timeout: DB_QUERY_TIMEOUT_MS,
      application_name: `agentsite-${process.title}`,
    },
  };
}

/** How often a process waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 250;

/**
 * Takes the migration lock, asking again until the process that holds it has finished. Asked, not
 * waited for in one statement: a statement waiting for the lock would be a transaction in progress,
 * and a migration that builds an index CONCURRENTLY waits for every transaction in progress to end,
 * so the two would wait for each other (and the waiting statement would time out first, after
 * DB_QUERY_TIMEOUT_MS, however long the other's migrations rightly take).
 */
async function takeMigrationLock(runner: QueryRunner): Promise<void> {
  let told = false;
  for (;;) {
    const rows: Array<{ taken: boolean }> = await runner.query('SELECT pg_try_advisory_lock($1) AS taken', [
      MIGRATION_LOCK_KEY,
    ]);
    if (rows[0]?.taken === true) {
      return;
    }
    if (!told) {
      new Logger('Database').log('Another process is running the migrations: waiting for it to finish');
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
  }
}

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so an API and a worker starting at the
 * same moment never apply the same migration twice.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await takeMigrationLock(runner);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}

export async function openDataSource(settings: Settings, entities: EntityClass[] = []): Promise<DataSource> {
  const dataSource = new DataSource(dataSourceOptions(settings, entities));
  await dataSource.initialize();
  return dataSource;
}
