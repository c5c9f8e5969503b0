import pg from 'pg';
import type { DataSource } from 'typeorm';
import { loadSettings } from '../../src/config/settings.js';
import { openDataSource } from '../../src/database/data-source.js';
import { ENTITIES } from '../../src/entities.js';
import { testEnv } from '../setup/shared-runtime.js';
import type { Stack } from './stack.js';

/** One query on its own connection to the tests' database (or `url`): for looking at rows a test left. */
export async function sql<T>(text: string, params: unknown[] = [], url = testEnv('databaseUrl')): Promise<T[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return (await db.query(text, params)).rows as T[];
  } finally {
    await db.end();
  }
}

/**
 * A data source of its own on the tests' database, as another process of the service would open it
 * (the service's settings for `stack`), with at most `poolMax` connections. The caller destroys it.
 */
export function ownDataSource(stack: Stack, poolMax: number): Promise<DataSource> {
  const settings = {
    ...loadSettings({ DATA_DIR: stack.dir, JWT_SECRET: 'x'.repeat(40), VAULT_KEY: stack.env.VAULT_KEY! }),
    databaseUrl: testEnv('databaseUrl'),
    databasePoolMax: poolMax,
  };
  return openDataSource(settings, ENTITIES);
}
