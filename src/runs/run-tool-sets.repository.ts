import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';

/**
 * How long after a run last started with it a tool set that no run names is kept: a run that starts
 * while the clean-up runs names its set (runs.tool_set_hash) in the statement that marks it used.
 */
const ORPHAN_GRACE = `interval '1 hour'`;

/** The SQL of run_tool_sets (each distinct tool set once, by hash) and of the runs that name them. */
@Injectable()
export class RunToolSetsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Names the set on the run's row and marks the set used, in one statement; false when the set is
   * not stored yet (then `insert`): the set's text is sent only when it is new.
   */
  async attach(runId: string, hash: string): Promise<boolean> {
    const rows: Array<{ stored: boolean }> = await this.dataSource.query(
      'WITH touched AS (UPDATE run_tool_sets SET used_at = now() WHERE hash = $2 RETURNING hash), ' +
        'named AS (UPDATE runs SET tool_set_hash = $2 WHERE id = $1 RETURNING id) ' +
        'SELECT EXISTS (SELECT 1 FROM touched) AS stored, (SELECT count(*) FROM named) AS named',
      [runId, hash],
    );
    return rows[0]?.stored === true;
  }

  async insert(hash: string, content: string): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO run_tool_sets (hash, content) VALUES ($1, $2) ON CONFLICT (hash) DO UPDATE SET used_at = now()',
      [hash, content],
    );
  }

  async content(hash: string): Promise<string | null> {
    const rows: Array<{ content: string }> = await this.dataSource.query(
      'SELECT content FROM run_tool_sets WHERE hash = $1',
      [hash],
    );
    return rows[0]?.content ?? null;
  }

  /** Deletes at most `limit` sets that no run names (and no run has started with for an hour). */
  async deleteOrphans(limit: number): Promise<number> {
    const [, count]: [unknown[], number] = await this.dataSource.query(
      'DELETE FROM run_tool_sets WHERE hash IN (SELECT s.hash FROM run_tool_sets s ' +
        `WHERE s.used_at < now() - ${ORPHAN_GRACE} ` +
        'AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.tool_set_hash = s.hash) LIMIT $1) ' +
        `AND used_at < now() - ${ORPHAN_GRACE}`,
      [limit],
    );
    return count;
  }
}
