import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { loadSettings } from '../../src/config/settings.js';
import { MIGRATION_LOCK_KEY, openDataSource, runMigrations } from '../../src/database/data-source.js';
import { testEnv } from '../setup/shared-runtime.js';

describe('migrations run by processes starting together', () => {
  let waiter: DataSource;
  let holder: pg.Client;

  beforeAll(async () => {
    const settings = {
      ...loadSettings({ JWT_SECRET: 'x'.repeat(40), VAULT_KEY: Buffer.alloc(32, 7).toString('base64') }),
      databaseUrl: testEnv('databaseUrl'),
      databasePoolMax: 2,
    };
    waiter = await openDataSource(settings);
    // The schema is in place, as the first process to start leaves it.
    await runMigrations(waiter);
    holder = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await holder.connect();
  });

  afterAll(async () => {
    await holder?.query('DROP INDEX IF EXISTS migrations_lock_probe').catch(() => undefined);
    await holder?.end();
    await waiter?.destroy();
  });

  it('a process waiting for the lock does not hold up the one migrating, even while it builds an index CONCURRENTLY', async () => {
    // The holder plays a process in the middle of its migrations; the waiter, a process started with it.
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    let settled: 'resolved' | 'rejected' | undefined;
    const waiting = runMigrations(waiter).then(
      (applied) => {
        settled = 'resolved';
        return applied;
      },
      (err: unknown) => {
        settled = 'rejected';
        throw err;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(settled).toBeUndefined();
    // A concurrent build waits for every transaction in progress: a waiter blocked inside a statement
    // would be one, and waits for the holder's lock in turn.
    await holder.query('CREATE INDEX CONCURRENTLY migrations_lock_probe ON users (updated_at)');
    expect(settled).toBeUndefined();
    await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    await expect(waiting).resolves.toEqual(expect.any(Array));
    const [valid] = (
      await holder.query(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'migrations_lock_probe'",
      )
    ).rows as Array<{ indisvalid: boolean }>;
    expect(valid).toEqual({ indisvalid: true });
  }, 40_000);
});
