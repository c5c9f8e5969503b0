import { type DataSource } from 'typeorm';

/**
 * The SQL of the health checks: the database answers a trivial query through the pool (a free
 * connection, a live server). No table is read.
 */
export async function pingDatabase(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}
