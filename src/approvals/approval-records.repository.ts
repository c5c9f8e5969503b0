import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { preparedStatement } from '../common/database/prepared-statement.js';
import type { ApprovalScope, ApprovalStatus } from '../../workflows/contracts.js';

/**
 * Whether the asking execution ($2 workflow id, $3 Temporal run id, both from Temporal) runs the run
 * $1: the agent's queue `agent-<agentId>` recorded on the run's row when it started.
 */
const BOUND = "($2 = 'agent-' || r.agent_id AND r.workflow_id = $2 AND r.temporal_run_id = $3)";

/**
 * A pending row for a call of an active run, its agent, user and workspace from the run's row (not
 * the input); once per id. `bound`: the asker runs the run (null: no such run); `active`: the run is.
 */
const REQUEST_QUERY =
  `WITH target AS (SELECT r.id, r.agent_id, r.user_id, a.workspace_id, ${BOUND} AS bound, ` +
  "r.status = 'active' AS active FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.id = $1), " +
  'inserted AS (INSERT INTO approvals (id, run_id, agent_id, user_id, workspace_id, site_id, site_name, tool, ' +
  'scope, input, requested_at, expires_at) SELECT $4, t.id, t.agent_id, t.user_id, t.workspace_id, $5, $6, $7, ' +
  '$8, $9::jsonb, $10, $11 FROM target t WHERE t.bound AND t.active ON CONFLICT (id) DO NOTHING RETURNING id) ' +
  'SELECT (SELECT bound FROM target) AS bound, (SELECT active FROM target) AS active, ' +
  '(SELECT count(*) FROM inserted)::int AS inserted';

/**
 * A pending row of the run $1 takes its outcome ($5 status, $6 when, $7/$8 who, $9 the note), once: a
 * row decided already is left as it is. `decided_by` only names a user that exists.
 */
const SETTLE_QUERY =
  `WITH target AS (SELECT r.id, ${BOUND} AS bound FROM runs r WHERE r.id = $1), ` +
  'settled AS (UPDATE approvals p SET status = $5, decided_at = $6, ' +
  'decided_by = (SELECT u.id FROM users u WHERE u.id = $7::uuid), decided_by_name = $8, note = $9 ' +
  "FROM target t WHERE p.id = $4 AND p.run_id = t.id AND t.bound AND p.status = 'pending' RETURNING p.id) " +
  'SELECT (SELECT bound FROM target) AS bound, (SELECT count(*) FROM settled)::int AS settled';

export interface PendingApprovalRow {
  approvalId: string;
  siteId: string | null;
  siteName: string;
  tool: string;
  scope: ApprovalScope;
  input: unknown;
  requestedAt: Date;
  expiresAt: Date;
}

export interface ApprovalOutcomeRow {
  approvalId: string;
  status: Exclude<ApprovalStatus, 'pending'>;
  decidedAt: Date;
  decidedBy: string | null;
  decidedByName: string | null;
  note: string | null;
}

/** What the asking execution may do with the run's rows: `bound` null when the run does not exist. */
export interface RecordResult {
  bound: boolean | null;
  active?: boolean | null;
  changed: number;
}

/**
 * The worker's writes of the `approvals` table (feature `approvals`): a run's waits, through its
 * workflow's activities. Each is one statement that checks the asking execution against the run's row.
 */
@Injectable()
export class ApprovalRecordsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async request(
    runId: string,
    execution: { workflowId: string; runId: string },
    row: PendingApprovalRow,
  ): Promise<RecordResult> {
    const rows = (await this.dataSource.query(preparedStatement('approvals_request', REQUEST_QUERY), [
      runId,
      execution.workflowId,
      execution.runId,
      row.approvalId,
      row.siteId,
      row.siteName,
      row.tool,
      row.scope,
      JSON.stringify(row.input ?? null),
      row.requestedAt,
      row.expiresAt,
    ])) as Array<{ bound: boolean | null; active: boolean | null; inserted: number }>;
    const result = rows[0];
    return { bound: result?.bound ?? null, active: result?.active ?? null, changed: result?.inserted ?? 0 };
  }

  async settle(
    runId: string,
    execution: { workflowId: string; runId: string },
    outcome: ApprovalOutcomeRow,
  ): Promise<RecordResult> {
    const rows = (await this.dataSource.query(preparedStatement('approvals_settle', SETTLE_QUERY), [
      runId,
      execution.workflowId,
      execution.runId,
      outcome.approvalId,
      outcome.status,
      outcome.decidedAt,
      outcome.decidedBy,
      outcome.decidedByName,
      outcome.note,
    ])) as Array<{ bound: boolean | null; settled: number }>;
    const result = rows[0];
    return { bound: result?.bound ?? null, changed: result?.settled ?? 0 };
  }
}
