import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ApprovalStatus } from '../../workflows/contracts.js';
import { RowMapper } from '../common/database/row-mapper.js';
import type { PageQuery } from '../common/pagination.js';
import type { Scope } from '../workspaces/scope.js';
import { ApprovalEntity } from './approval.entity.js';

/** An approval with its agent's name, as the inbox lists it. */
export interface ApprovalRow extends ApprovalEntity {
  agentName: string;
}

/**
 * The API's reads of the `approvals` rows (the inbox, and the row a decision names). The worker writes
 * them (ApprovalRecordsRepository); the API never does: a decision goes to the run's workflow.
 */
@Injectable()
export class ApprovalsRepository {
  private readonly rows: RowMapper<ApprovalEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new RowMapper(dataSource, ApprovalEntity, 'a');
  }

  /**
   * The scope's approvals (of its agents: the caller's personal ones, or the workspace's), newest
   * first, `limit + 1` of them (see pageOf), with `status` when given.
   */
  async list(scope: Scope, status: ApprovalStatus | undefined, query: PageQuery): Promise<ApprovalRow[]> {
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const where =
      scope.workspace !== null
        ? [`ag.workspace_id = ${param(scope.workspace.id)}`]
        : [`ag.user_id = ${param(scope.user.id)}`, 'ag.workspace_id IS NULL'];
    if (status !== undefined) {
      where.push(`a.status = ${param(status)}`);
    }
    if (query.cursor !== undefined) {
      where.push(`(a.requested_at, a.id) < (${param(query.cursor.at)}, ${param(query.cursor.id)})`);
    }
    const sql =
      `SELECT ${this.rows.select()}, ag.name AS "agentName" FROM approvals a JOIN agents ag ON ag.id = a.agent_id ` +
      `WHERE ${where.join(' AND ')} ORDER BY a.requested_at DESC, a.id DESC LIMIT ${param(query.limit + 1)}`;
    const raw: Array<Record<string, unknown>> = await this.dataSource.query(sql, params);
    return raw.map((row) => Object.assign(this.rows.from(row)!, { agentName: row.agentName as string }));
  }

  /** The approval `approvalId` of the run, or null. */
  findOfRun(runId: string, approvalId: string): Promise<ApprovalEntity | null> {
    return this.dataSource.getRepository(ApprovalEntity).findOneBy({ id: approvalId, runId });
  }
}
