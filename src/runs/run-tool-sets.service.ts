import { Injectable } from '@nestjs/common';
import type { RunToolSet } from '../../workflows/contracts.js';
import { canonicalJson, sha256Hex } from './run-tool-sets.js';
import { RunToolSetsRepository } from './run-tool-sets.repository.js';

/** What the worker keeps of tool sets in memory (their JSON text's length, summed), the oldest used going first. */
export const TOOL_SET_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * A run's tool set (its system prompt and tools), stored once per distinct content and named by the
 * sha256 of its canonical JSON: the workflow carries the hash, each model turn reads the set by it.
 * Sets are immutable, so the worker keeps the ones it read (up to TOOL_SET_CACHE_BYTES); a set read
 * from the database is checked against its hash before use.
 */
@Injectable()
export class RunToolSetsService {
  /** Hash → set, in the order of last use (a Map keeps insertion order). */
  private readonly cache = new Map<string, { set: RunToolSet; bytes: number }>();
  private cachedBytes = 0;

  constructor(private readonly repository: RunToolSetsRepository) {}

  /** Stores the run's set (when new) and names it on the run's row; its hash. */
  async attach(runId: string, set: RunToolSet): Promise<string> {
    const content = canonicalJson(set);
    const hash = sha256Hex(content);
    if (!(await this.repository.attach(runId, hash))) {
      await this.repository.insert(hash, content);
      await this.repository.attach(runId, hash);
    }
    this.remember(hash, set, content.length);
    return hash;
  }

  /** The set the hash names; an error when it is gone or its content does not hash to the name. */
  async read(hash: string): Promise<RunToolSet> {
    const cached = this.cache.get(hash);
    if (cached !== undefined) {
      this.cache.delete(hash);
      this.cache.set(hash, cached);
      return cached.set;
    }
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
      throw new Error('A tool set hash is malformed');
    }
    const content = await this.repository.content(hash);
    if (content === null) {
      throw new Error(`The tool set ${hash} is not stored`);
    }
    if (sha256Hex(content) !== hash) {
      throw new Error(`The tool set ${hash} does not match its hash`);
    }
    const set = JSON.parse(content) as RunToolSet;
    this.remember(hash, set, content.length);
    return set;
  }

  /** One bounded batch of the clean-up: sets no run names any more. */
  deleteOrphans(limit: number): Promise<number> {
    return this.repository.deleteOrphans(limit);
  }

  private remember(hash: string, set: RunToolSet, bytes: number): void {
    if (bytes > TOOL_SET_CACHE_BYTES || this.cache.has(hash)) {
      return;
    }
    this.cache.set(hash, { set, bytes });
    this.cachedBytes += bytes;
    for (const [oldest, entry] of this.cache) {
      if (this.cachedBytes <= TOOL_SET_CACHE_BYTES) {
        break;
      }
      this.cache.delete(oldest);
      this.cachedBytes -= entry.bytes;
    }
  }
}
