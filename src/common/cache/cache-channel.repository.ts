/**
 * The SQL of the caches' invalidation channel: the listener connection subscribes to the channel the
 * triggers of migration CacheInvalidation1764600000000 notify on, and is asked a trivial query to tell
 * it is still alive. No table: LISTEN/NOTIFY is shared infrastructure, not a feature's rows.
 */

/** The channel the triggers of migration CacheInvalidation1764600000000 notify on; payload `<prefix>:<id>`. */
export const CACHE_CHANNEL = 'agentsite_cache';

/** The part of a pg client the bus uses (a fake in the unit test). */
export interface ListenerClient {
  connect(): Promise<unknown>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

/** Subscribes the connection to CACHE_CHANNEL's notifications. */
export async function listenOnCacheChannel(client: ListenerClient): Promise<void> {
  await client.query(`LISTEN ${CACHE_CHANNEL}`);
}

/** The heartbeat: a query the server must answer on this connection. */
export async function pingListener(client: ListenerClient): Promise<void> {
  await client.query('SELECT 1');
}
