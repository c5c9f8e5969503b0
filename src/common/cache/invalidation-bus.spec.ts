import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Settings } from '../../config/settings.js';
import { CACHE_CHANNEL, CacheInvalidationBus, type ListenerClient } from './invalidation-bus.js';
import { LocalCache } from './local-cache.js';

class FakeClient extends EventEmitter implements ListenerClient {
  queries: string[] = [];
  ended = false;
  /** Heartbeats get no answer (a connection that died without a word). */
  silent = false;
  constructor(private readonly failConnect = false) {
    super();
  }
  connect(): Promise<unknown> {
    return this.failConnect ? Promise.reject(new Error('refused')) : Promise.resolve();
  }
  query(sql: string): Promise<unknown> {
    this.queries.push(sql);
    return this.silent ? new Promise(() => undefined) : Promise.resolve();
  }
  end(): Promise<void> {
    this.ended = true;
    return Promise.resolve();
  }
  notify(payload: string): void {
    this.emit('notification', { channel: CACHE_CHANNEL, payload });
  }
}

class TestBus extends CacheInvalidationBus {
  clients: FakeClient[] = [];
  failNext = 0;
  protected override newClient(): ListenerClient {
    const client = new FakeClient(this.failNext-- > 0);
    this.clients.push(client);
    return client;
  }
}

const settings = { cacheTtlSeconds: 30 } as Settings;
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error('condition not met in 5 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('LocalCache', () => {
  const live = { live: true };

  it('keeps at most max entries, dropping the least recently used', () => {
    const cache = new LocalCache<number>('x', live, 2, 1000);
    cache.set('a', 1, cache.ticket());
    cache.set('b', 2, cache.ticket());
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3, cache.ticket());
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('forgets entries after the ttl', () => {
    let now = 0;
    const cache = new LocalCache<number>('x', live, 10, 1000, () => now);
    cache.set('a', 1, cache.ticket());
    now = 999;
    expect(cache.get('a')).toBe(1);
    now = 1000;
    expect(cache.get('a')).toBeUndefined();
  });

  it('does not store a value read before a drop that came while it was read', () => {
    const cache = new LocalCache<number>('x', live, 10, 1000);
    const ticket = cache.ticket();
    cache.drop('a');
    cache.set('a', 1, ticket);
    expect(cache.get('a')).toBeUndefined();
    cache.set('a', 2, cache.ticket());
    expect(cache.get('a')).toBe(2);
  });

  it('update changes a cached value in place, and keeps out a value read before it', () => {
    const cache = new LocalCache<{ credits: number }>('x', live, 10, 1000);
    cache.set('a', { credits: 10 }, cache.ticket());
    const ticket = cache.ticket();
    cache.update('a', (v) => ({ ...v, credits: 7 }));
    expect(cache.get('a')).toEqual({ credits: 7 });
    // A fill that read the row before the change must not put the old balance back.
    cache.set('a', { credits: 10 }, ticket);
    expect(cache.get('a')).toEqual({ credits: 7 });
    cache.update('b', (v) => ({ ...v, credits: 1 }));
    expect(cache.get('b')).toBeUndefined();
  });

  it('answers misses and stores nothing while not live, or with a ttl of 0', () => {
    const state = { live: false };
    const cache = new LocalCache<number>('x', state, 10, 1000);
    cache.set('a', 1, cache.ticket());
    state.live = true;
    expect(cache.get('a')).toBeUndefined();
    cache.set('a', 1, cache.ticket());
    state.live = false;
    expect(cache.get('a')).toBeUndefined();
    const off = new LocalCache<number>('x', live, 10, 0);
    off.set('a', 1, off.ticket());
    expect(off.get('a')).toBeUndefined();
  });
});

describe('CacheInvalidationBus', () => {
  it('opens no connection when no cache is registered (the worker)', () => {
    const bus = new TestBus(settings);
    bus.onApplicationBootstrap();
    expect(bus.clients).toHaveLength(0);
    expect(bus.live).toBe(false);
  });

  it('listens, drops the entry a notification names, and bypasses the caches while reconnecting', async () => {
    const bus = new TestBus(settings);
    const users = bus.cache<string>('user', 10);
    const tokens = bus.cache<boolean>('token', 10);
    expect(() => bus.cache('user', 10)).toThrow();
    bus.onApplicationBootstrap();
    await until(() => bus.live);
    const first = bus.clients[0]!;
    expect(first.queries).toEqual([`LISTEN ${CACHE_CHANNEL}`]);

    users.set('u1', 'one', users.ticket());
    users.set('u2', 'two', users.ticket());
    tokens.set('t1', false, tokens.ticket());
    first.notify('user:u1');
    first.notify('token:t1');
    first.notify('unknown:u2');
    first.emit('notification', { channel: 'other', payload: 'user:u2' });
    expect(users.get('u1')).toBeUndefined();
    expect(users.get('u2')).toBe('two');
    expect(tokens.get('t1')).toBeUndefined();

    // The connection is lost: nothing is served or kept until it is back, subscribed and emptied.
    bus.failNext = 1;
    first.emit('error', new Error('terminating connection due to administrator command'));
    first.emit('end');
    expect(bus.live).toBe(false);
    expect(first.ended).toBe(true);
    expect(users.size).toBe(0);
    users.set('u2', 'stale', users.ticket());
    expect(users.get('u2')).toBeUndefined();
    await until(() => bus.clients.length === 2);
    await flush();
    expect(bus.live).toBe(false);
    await until(() => bus.live);
    expect(bus.clients).toHaveLength(3);
    expect(bus.clients[2]!.queries).toEqual([`LISTEN ${CACHE_CHANNEL}`]);
    expect(users.get('u2')).toBeUndefined();
    users.set('u2', 'fresh', users.ticket());
    expect(users.get('u2')).toBe('fresh');

    await bus.onApplicationShutdown();
    expect(bus.live).toBe(false);
    expect(bus.clients[2]!.ended).toBe(true);
  });

  it('dropLocal drops the entry in this process', async () => {
    const bus = new TestBus(settings);
    const users = bus.cache<string>('user', 10);
    bus.onApplicationBootstrap();
    await until(() => bus.live);
    users.set('u1', 'one', users.ticket());
    bus.dropLocal('user', 'u1');
    bus.dropLocal('nothing', 'u1');
    expect(users.get('u1')).toBeUndefined();
    await bus.onApplicationShutdown();
  });

  it('hands `<prefix>:<rest>` notifications to a registered receiver, and refuses a prefix twice', async () => {
    const bus = new TestBus(settings);
    const seen: string[] = [];
    bus.register({ prefix: 'credits', drop: (rest) => seen.push(rest), clear: () => undefined });
    expect(() => bus.cache('credits', 1)).toThrow('exists already');
    bus.onApplicationBootstrap();
    await until(() => bus.live);
    bus.clients[0]!.notify('credits:u1:42');
    bus.clients[0]!.notify('user:u1');
    expect(seen).toEqual(['u1:42']);
    await bus.onApplicationShutdown();
  });

  it('opens its connection when the first cache is made after the start (on first use)', async () => {
    const bus = new TestBus(settings);
    bus.onApplicationBootstrap();
    expect(bus.clients).toHaveLength(0);
    bus.cache('site', 10);
    await until(() => bus.live);
    expect(bus.clients).toHaveLength(1);
    bus.cache('other', 10);
    expect(bus.clients).toHaveLength(1);
    await bus.onApplicationShutdown();
  });

  describe('heartbeat', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it('treats a connection that stops answering as lost: caches bypassed, then a new connection', async () => {
      jest.useFakeTimers();
      const bus = new TestBus(settings);
      const users = bus.cache<string>('user', 10);
      bus.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(0);
      expect(bus.live).toBe(true);
      users.set('u1', 'one', users.ticket());

      await jest.advanceTimersByTimeAsync(5_000);
      expect(bus.clients[0]!.queries).toContain('SELECT 1');
      expect(bus.live).toBe(true);
      expect(users.get('u1')).toBe('one');

      bus.clients[0]!.silent = true;
      await jest.advanceTimersByTimeAsync(5_000 + 3_000);
      expect(bus.live).toBe(false);
      expect(bus.clients[0]!.ended).toBe(true);
      expect(users.get('u1')).toBeUndefined();

      await jest.advanceTimersByTimeAsync(100);
      expect(bus.clients).toHaveLength(2);
      expect(bus.live).toBe(true);
      await bus.onApplicationShutdown();
    });
  });
});
