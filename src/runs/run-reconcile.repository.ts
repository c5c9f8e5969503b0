import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { RowMapper } from '../common/database/row-mapper.js';
import type { ReconcileRunsCursor } from '../../workflows/contracts.js';
import { RunEntity } from './run.entity.js';
import { type EndedRun, endedRunsOf } from './runs.repository.js';

/**
 * The rows the run reconciler looks at: those of the partial index `runs_unreconciled` (migration
 * 1765000021000), runs not ended and started runs that ended without an archive. Its predicate is
 * repeated here word for word, so that the planner reads the index and nothing else.
 */
const UNRECONCILED = "r.archived_at IS NULL AND (r.status IN ('queued', 'active') OR r.temporal_run_id IS NOT NULL)";

/** The SQL of the run reconciler (RunReconcileService); the archive itself is RunsRepository.saveArchive. */
@Injectable()
export class RunReconcileRepository {
  private readonly runRows: RowMapper<RunEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.runRows = new RowMapper(dataSource, RunEntity, 'r');
  }

  /**
   * Up to `limit` runs, in (queued_at, id) order after `after`, that may have lost their execution or
   * their archive: not ended and queued more than `minAgeSeconds` ago (a run still being queued is
   * never touched), or started, ended and not archived.
   */
  async candidates(after: ReconcileRunsCursor | null, minAgeSeconds: number, limit: number): Promise<RunEntity[]> {
    // Two texts rather than an OR on the cursor, so that both read the index from where they start.
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${this.runRows.select()} FROM runs r WHERE ${UNRECONCILED} ` +
        'AND r.queued_at < now() - make_interval(secs => $1) ' +
        (after === null ? '' : 'AND (r.queued_at, r.id) > ($3::timestamptz, $4::uuid) ') +
        'ORDER BY r.queued_at, r.id LIMIT $2',
      after === null ? [minAgeSeconds, limit] : [minAgeSeconds, limit, after.queuedAt, after.id],
    );
    return rows.map((row) => this.runRows.from(row)!);
  }

  /**
   * Ends a run that its execution left queued or active, as failed with `error`; null when it had
   * ended meanwhile (its own step came first: that end stands).
   */
  async markFailed(id: string, error: { error: string; code: string }): Promise<EndedRun | null> {
    // TypeORM answers an UPDATE's raw query with [rows, affected].
    const [rows] = (await this.dataSource.query(
      "UPDATE runs SET status = 'failed', ended_at = now(), error = $2::jsonb " +
        "WHERE id = $1 AND status IN ('queued', 'active') RETURNING triggered_by, started_at, ended_at",
      [id, JSON.stringify(error)],
    )) as [unknown, number];
    return endedRunsOf(rows)[0] ?? null;
  }
}
