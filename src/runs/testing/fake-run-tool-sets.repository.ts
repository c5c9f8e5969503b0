import type { RunToolSetsRepository } from '../run-tool-sets.repository.js';

/** run_tool_sets and runs.tool_set_hash in memory; counts the reads that reach "the database". */
export class FakeRunToolSetsRepository implements Pick<
  RunToolSetsRepository,
  'attach' | 'insert' | 'content' | 'deleteOrphans'
> {
  readonly sets = new Map<string, string>();
  readonly runs = new Map<string, string>();
  reads = 0;
  inserts = 0;

  attach(runId: string, hash: string): Promise<boolean> {
    this.runs.set(runId, hash);
    return Promise.resolve(this.sets.has(hash));
  }

  insert(hash: string, content: string): Promise<void> {
    this.inserts += 1;
    this.sets.set(hash, content);
    return Promise.resolve();
  }

  content(hash: string): Promise<string | null> {
    this.reads += 1;
    return Promise.resolve(this.sets.get(hash) ?? null);
  }

  deleteOrphans(limit: number): Promise<number> {
    const named = new Set(this.runs.values());
    const orphans = [...this.sets.keys()].filter((h) => !named.has(h)).slice(0, limit);
    orphans.forEach((h) => this.sets.delete(h));
    return Promise.resolve(orphans.length);
  }
}
