/** What the invalidation bus needs of a cache: drop one key, drop everything. */
export interface InvalidatedCache {
  /** The prefix of its invalidation keys (`user` for `user:<id>`). */
  readonly prefix: string;
  drop(id: string): void;
  clear(): void;
}

/** Whether the caches may be used now: the bus is subscribed (while it is not, notifications are lost). */
export interface CacheLiveness {
  readonly live: boolean;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * A bounded in-process cache of rows that other processes may change: least recently used entries
 * go beyond `max`, every entry expires after `ttlMs` (a safety net; the bus drops changed rows), and
 * while the bus is not subscribed it answers misses and keeps nothing. A hit does no I/O.
 */
export class LocalCache<V> implements InvalidatedCache {
  private readonly entries = new Map<string, Entry<V>>();
  /** Bumped by every drop and clear: a fill that started before one may have read the old row. */
  private generation = 0;

  constructor(
    readonly prefix: string,
    private readonly liveness: CacheLiveness,
    private readonly max: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0 && this.liveness.live;
  }

  get size(): number {
    return this.entries.size;
  }

  get(id: string): V | undefined {
    if (!this.enabled) {
      return undefined;
    }
    const entry = this.entries.get(id);
    if (entry === undefined) {
      return undefined;
    }
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(id);
      return undefined;
    }
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.value;
  }

  /** A token to pass to set(): a value read after it was taken may be stored. */
  ticket(): number {
    return this.generation;
  }

  /** Stores a value read after `ticket` was taken, unless a drop or clear came in between. */
  set(id: string, value: V, ticket: number): void {
    if (!this.enabled || ticket !== this.generation) {
      return;
    }
    this.entries.delete(id);
    this.entries.set(id, { value, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /**
   * Replaces the entry's value with `change(value)` when there is one (its lifetime unchanged), and
   * keeps out any value read before (as a drop does): a notification that carries the new state.
   */
  update(id: string, change: (value: V) => V): void {
    this.generation += 1;
    const entry = this.entries.get(id);
    if (entry !== undefined) {
      entry.value = change(entry.value);
    }
  }

  drop(id: string): void {
    this.generation += 1;
    this.entries.delete(id);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
