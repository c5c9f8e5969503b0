import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ENDED } from './runs.repository.js';

/** The SQL of run retention (RunRetentionService, RUN_RETENTION_DAYS): ended runs past their age. */
@Injectable()
export class RunRetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Up to `limit` ended runs created more than `days` days ago, oldest first. */
  expiredRuns(
    days: number,
    limit: number,
  ): Promise<Array<{ id: string; workflow_id: string; temporal_run_id: string | null }>> {
    return this.dataSource.query(
      `SELECT id, workflow_id, temporal_run_id FROM runs WHERE created_at < now() - make_interval(days => $1) AND status IN ${ENDED} ` +
        'ORDER BY created_at, id LIMIT $2',
      [days, limit],
    );
  }

  /** Deletes ended runs; their archives go with them (ON DELETE CASCADE). */
  async deleteEnded(ids: string[]): Promise<number> {
    // A DELETE answers TypeORM's raw query with [rows, count].
    const [, count]: [unknown[], number] = await this.dataSource.query(
      `DELETE FROM runs WHERE id = ANY($1::uuid[]) AND status IN ${ENDED}`,
      [ids],
    );
    return count;
  }
}
