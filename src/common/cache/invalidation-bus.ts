import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import pg from 'pg';
import { SETTINGS } from '../../config/settings.module.js';
import { effectiveDatabaseUrl, type Settings } from '../../config/settings.js';
import { CACHE_CHANNEL, type ListenerClient, listenOnCacheChannel, pingListener } from './cache-channel.repository.js';
import { type CacheLiveness, type InvalidatedCache, LocalCache } from './local-cache.js';

export { CACHE_CHANNEL, type ListenerClient } from './cache-channel.repository.js';

/** The listener connection's application_name, with the process id so one process's listener can be found. */
export function listenerApplicationName(pid: number = process.pid): string {
  return `agentsite-cache-${pid}`;
}

const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/**
 * A connection that died without a word (a network that drops packets) would keep the caches in use
 * while no notification arrives: a query every HEARTBEAT_MS that must answer within
 * HEARTBEAT_TIMEOUT_MS tells it, and the caches are bypassed from then on.
 */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * The process's caches and the one PostgreSQL connection (not from the pool) that keeps them honest:
 * it LISTENs on CACHE_CHANNEL and drops the entry each notification names. While that connection is
 * down the caches are emptied and answer misses (a change made meanwhile is never heard of); after it
 * is back and subscribed they are emptied once more and used again. A process that registers no cache
 * (the worker) opens no connection.
 */
@Injectable()
export class CacheInvalidationBus implements CacheLiveness, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Caches');
  private readonly caches = new Map<string, InvalidatedCache>();
  private client: ListenerClient | undefined;
  private subscribed = false;
  private stopped = false;
  private bootstrapped = false;
  private reconnectMs = RECONNECT_FIRST_MS;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  /** The listener connection (the unit test overrides it). */
  protected newClient(): ListenerClient {
    return new pg.Client({
      connectionString: effectiveDatabaseUrl(this.settings),
      application_name: listenerApplicationName(),
      keepAlive: true,
      keepAliveInitialDelayMillis: HEARTBEAT_MS,
    });
  }

  get live(): boolean {
    return this.subscribed;
  }

  /**
   * A new cache of at most `max` entries whose rows are invalidated by `<prefix>:<id>` notifications.
   * One made after the application has started (on first use) opens the connection if none is open.
   */
  cache<V>(prefix: string, max: number): LocalCache<V> {
    const cache = new LocalCache<V>(prefix, this, max, this.settings.cacheTtlSeconds * 1000);
    this.register(cache);
    return cache;
  }

  /**
   * A receiver of `<prefix>:<rest>` notifications other than a cache of its own (`drop(rest)`, and
   * `clear()` whenever the connection was lost), on the same terms as cache().
   */
  register(receiver: InvalidatedCache): void {
    if (this.caches.has(receiver.prefix)) {
      throw new Error(`a cache for "${receiver.prefix}" exists already`);
    }
    this.caches.set(receiver.prefix, receiver);
    if (this.bootstrapped && this.client === undefined && !this.stopped && this.settings.cacheTtlSeconds > 0) {
      void this.connect();
    }
  }

  /** Drops a key in this process at once (a writer's own next read sees its write without waiting for the notification). */
  dropLocal(prefix: string, id: string): void {
    this.caches.get(prefix)?.drop(id);
  }

  onApplicationBootstrap(): void {
    this.bootstrapped = true;
    if (this.caches.size > 0 && this.settings.cacheTtlSeconds > 0) {
      void this.connect();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    this.subscribed = false;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = this.newClient();
    this.client = client;
    let lost = false;
    const onLost = (err?: Error): void => {
      if (lost) {
        return;
      }
      lost = true;
      this.disconnected(client, err);
    };
    client.on('notification', (message) => {
      if (message.channel === CACHE_CHANNEL && message.payload !== undefined) {
        this.dispatch(message.payload);
      }
    });
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      await listenOnCacheChannel(client);
    } catch (err) {
      onLost(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (lost || this.stopped) {
      return;
    }
    // Whatever changed while nobody listened was not heard of.
    this.clearAll();
    this.subscribed = true;
    this.reconnectMs = RECONNECT_FIRST_MS;
    this.heartbeat = setInterval(() => void this.beat(client, onLost), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.logger.log(`listening on ${CACHE_CHANNEL}`);
  }

  private async beat(client: ListenerClient, onLost: (err?: Error) => void): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        pingListener(client),
        new Promise((_, reject) => {
          timeout = setTimeout(() => reject(new Error('no answer to the heartbeat')), HEARTBEAT_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      onLost(err instanceof Error ? err : new Error(String(err)));
    } finally {
      clearTimeout(timeout);
    }
  }

  private disconnected(client: ListenerClient, err: Error | undefined): void {
    this.subscribed = false;
    clearInterval(this.heartbeat);
    this.clearAll();
    client.end().catch(() => undefined);
    if (this.stopped) {
      return;
    }
    this.logger.warn(
      `cache invalidation connection lost (${err?.message ?? 'closed'}); caches bypassed, reconnecting in ${this.reconnectMs} ms`,
    );
    this.timer = setTimeout(() => void this.connect(), this.reconnectMs);
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
  }

  private dispatch(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon > 0) {
      this.caches.get(payload.slice(0, colon))?.drop(payload.slice(colon + 1));
    }
  }

  private clearAll(): void {
    for (const cache of this.caches.values()) {
      cache.clear();
    }
  }
}

/** The caches' bus, one per process (global: every feature that caches its rows registers there). */
@Global()
@Module({ providers: [CacheInvalidationBus], exports: [CacheInvalidationBus] })
export class CacheModule {}
