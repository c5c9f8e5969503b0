import pg from 'pg';
import { testEnv } from '../setup/shared-runtime.js';

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
