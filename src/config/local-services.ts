import { readFileSync } from 'node:fs';
import path from 'node:path';

/*
 * Where the processes connect when DATABASE_URL or TEMPORAL_ADDRESS is unset: the embedded PostgreSQL
 * and the Temporal dev server that `npm start` (scripts/runtime) runs for them.
 */

/** The embedded PostgreSQL's database name and user (used when DATABASE_URL is unset). */
export const EMBEDDED_DB = { user: 'postgres', database: 'agentsite' } as const;

/**
 * The password of the embedded PostgreSQL's user before it was generated per data dir: a data dir
 * made then still has it until its next `npm start` changes it (scripts/runtime/postgres.ts).
 */
export const LEGACY_EMBEDDED_DB_PASSWORD = 'postgres';

/** The file under DATA_DIR that keeps the embedded PostgreSQL's generated password (mode 0600). */
export function embeddedDbPasswordFile(dataDir: string): string {
  return path.join(dataDir, 'postgres-password');
}

/** The embedded PostgreSQL's password as `npm start` keeps it (the old fixed one before any start made it). */
export function embeddedDbPassword(dataDir: string): string {
  try {
    return readFileSync(embeddedDbPasswordFile(dataDir), 'utf8').trim() || LEGACY_EMBEDDED_DB_PASSWORD;
  } catch {
    return LEGACY_EMBEDDED_DB_PASSWORD;
  }
}

/** The database the processes connect to: DATABASE_URL, or the embedded server started by the scripts. */
export function effectiveDatabaseUrl(settings: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPostgresPort: number;
}): string {
  if (settings.databaseUrl !== undefined) {
    return settings.databaseUrl;
  }
  const password = encodeURIComponent(embeddedDbPassword(settings.dataDir));
  return `postgres://${EMBEDDED_DB.user}:${password}@127.0.0.1:${settings.embeddedPostgresPort}/${EMBEDDED_DB.database}`;
}

/** The Temporal frontend the processes connect to: TEMPORAL_ADDRESS, or the dev server started by the scripts. */
export function effectiveTemporalAddress(settings: {
  temporalAddress: string | undefined;
  temporalDevPort: number;
}): string {
  return settings.temporalAddress ?? `127.0.0.1:${settings.temporalDevPort}`;
}
