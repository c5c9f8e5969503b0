import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { preparedStatement } from '../common/database/prepared-statement.js';
import type { RunTrigger, RunTriggerFields } from '../../workflows/contracts.js';

/** The SQL of a model turn's check: one raw query on the hot path of every turn after a run's first. */
@Injectable()
export class ModelRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The balance of the run's owner when the run is active and `userId` owns it, with what triggered
   * the run (its first message is built from it); undefined otherwise. Both ids must be UUIDs (the
   * caller checks). One round trip.
   */
  async activeRunTurn(
    runId: string,
    userId: string,
  ): Promise<{ credits: number; trigger: RunTriggerFields } | undefined> {
    const rows: Array<{
      credits: string;
      triggered_by: RunTrigger;
      input: string | null;
      payload: unknown;
      queued_at: Date;
    }> = await this.dataSource.query(
      preparedStatement(
        'model_active_run_turn',
        `SELECT u.credits, r.triggered_by, r.input, r.payload, r.queued_at FROM runs r JOIN users u ON u.id = r.user_id
           WHERE r.id = $1 AND r.user_id = $2 AND r.status = 'active'`,
      ),
      [runId, userId],
    );
    const row = rows[0];
    return row === undefined
      ? undefined
      : {
          credits: Number(row.credits),
          trigger: {
            triggeredBy: row.triggered_by,
            input: row.input,
            payload: row.payload ?? null,
            queuedAt: row.queued_at,
          },
        };
  }
}
