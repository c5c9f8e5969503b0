import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { preparedStatement } from '../common/database/prepared-statement.js';

/** What a firing's one statement found and did (see ScheduledRunsRepository.insert). */
export interface ScheduledRow {
  /** The agent with its owner's balance; null when it no longer exists. */
  agent: { userId: string; name: string; scheduled: boolean; credits: number } | null;
  /** Whether the agent had a run queued or active (other than this one) as the statement saw it. */
  busy: boolean;
  /** The firing's own row, when an earlier attempt of the firing wrote it (a retried activity). */
  existing: { status: string; queuedAt: Date } | null;
  /** When this statement wrote the row: its queue time; null when it wrote nothing. */
  insertedAt: Date | null;
}

/**
 * A firing of an agent's schedule in one statement ($1 the agent, $2 the firing's run id): the agent,
 * its owner's balance, whether the agent has a run queued or active (read through the partial index
 * of open runs), the firing's own row if an earlier attempt wrote it, and the insert of the queued
 * row when the agent is still scheduled, its owner has credits, it is idle and the row is not there
 * yet. Every part sees one snapshot; the agent's queue workflow decides for good (it skips a request
 * that finds it busy), this only spares it the requests that are sure to be skipped.
 */
const INSERT_QUERY =
  'WITH agent AS (SELECT a.user_id, a.name, a.trigger_type, u.credits FROM agents a ' +
  'JOIN users u ON u.id = a.user_id WHERE a.id = $1), ' +
  'existing AS (SELECT status, queued_at FROM runs WHERE id = $2 AND agent_id = $1), ' +
  'open AS (SELECT EXISTS (SELECT 1 FROM runs r WHERE r.agent_id = $1 ' +
  "AND r.status IN ('queued', 'active') AND r.id <> $2) AS busy), " +
  'inserted AS (INSERT INTO runs (id, agent_id, user_id, status, triggered_by, payload, input, ' +
  'system_prompt_source, delivery_id, workflow_id, temporal_run_id, error, usage, queued_at) ' +
  "SELECT $2, $1, a.user_id, 'queued', 'schedule', NULL, NULL, 'agent', NULL, 'agent-' || $1::text, NULL, NULL, " +
  `'{"inputTokens":0,"outputTokens":0,"credits":0}'::jsonb, now() FROM agent a, open o ` +
  "WHERE a.trigger_type = 'scheduled' AND a.credits > 0 AND NOT o.busy AND NOT EXISTS (SELECT 1 FROM existing) " +
  'ON CONFLICT DO NOTHING RETURNING queued_at) ' +
  'SELECT a.user_id, a.name, a.trigger_type, a.credits, o.busy, e.status AS existing_status, ' +
  'e.queued_at AS existing_queued_at, i.queued_at AS inserted_at ' +
  'FROM (SELECT 1) one CROSS JOIN open o LEFT JOIN agent a ON true LEFT JOIN existing e ON true ' +
  'LEFT JOIN inserted i ON true';

/** The `runs` rows of scheduled firings (the table is runs', see RunsRepository). */
@Injectable()
export class ScheduledRunsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The firing's row, written when the agent is due a run (see INSERT_QUERY); one round trip. */
  async insert(agentId: string, runId: string): Promise<ScheduledRow> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement('runs_insert_scheduled', INSERT_QUERY),
      [agentId, runId],
    );
    const row = rows[0]!;
    return {
      agent:
        row.user_id === null
          ? null
          : {
              userId: row.user_id as string,
              name: row.name as string,
              scheduled: row.trigger_type === 'scheduled',
              credits: Number(row.credits),
            },
      busy: row.busy === true,
      existing:
        row.existing_status === null
          ? null
          : { status: row.existing_status as string, queuedAt: row.existing_queued_at as Date },
      insertedAt: (row.inserted_at as Date | null) ?? null,
    };
  }

  /** Deletes the firing's row if it is still queued, and only a scheduled row of the agent. */
  async deleteIfQueued(agentId: string, runId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      "DELETE FROM runs WHERE id = $1 AND agent_id = $2 AND triggered_by = 'schedule' AND status = 'queued' RETURNING id",
      [runId, agentId],
    );
    return rows.length > 0;
  }
}
