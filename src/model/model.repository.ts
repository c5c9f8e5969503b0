import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { preparedStatement } from '../common/database/prepared-statement.js';

/** The SQL of a model turn's check: one raw query on the hot path of every turn after a run's first. */
@Injectable()
export class ModelRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The balance of the run's owner when the run is active and `userId` owns it; undefined otherwise.
   * Both ids must be UUIDs (the caller checks). One round trip.
   */
  async activeRunOwnerCredits(runId: string, userId: string): Promise<number | undefined> {
    const rows: Array<{ credits: string }> = await this.dataSource.query(
      preparedStatement(
        'model_active_run_owner_credits',
        `SELECT u.credits FROM runs r JOIN users u ON u.id = r.user_id
           WHERE r.id = $1 AND r.user_id = $2 AND r.status = 'active'`,
      ),
      [runId, userId],
    );
    return rows[0] === undefined ? undefined : Number(rows[0].credits);
  }
}
