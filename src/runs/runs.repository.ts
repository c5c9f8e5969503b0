import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, IsNull, LessThan, Not, type DataSource } from 'typeorm';
import { AgentEntity } from '../agents/agent.entity.js';
import { type PageQuery, keysetWhere } from '../common/pagination.js';
import { RowMapper } from '../common/database/row-mapper.js';
import { type Scope } from '../workspaces/scope.js';
import type { FinishRunInput, RunTrigger } from '../../workflows/contracts.js';
import { RunArchiveEntity } from './run-archive.entity.js';
import { RunEntity } from './run.entity.js';
import type { RunAwaiting, RunView } from './run-response.js';
import type { TimelineEntry } from './timeline.js';
import { preparedStatement } from '../common/database/prepared-statement.js';

/** SQL: the statuses of a run that has ended. */
const ENDED = "('completed', 'failed', 'cancelled')";

/** SQL: how many runs of the agent are queued or active ahead of the run (queued_at, id) — its queue position. */
function runsAhead(agentId: string, queuedAt: string, runId: string): string {
  return (
    `(SELECT count(*)::int FROM runs r WHERE r.agent_id = ${agentId} AND r.status IN ('queued', 'active') ` +
    `AND (r.queued_at, r.id) < (${queuedAt}, ${runId}))`
  );
}

/** SQL: how many runs of the agent are queued or active, other than the run (its place when it joins the queue). */
function runsOpen(agentId: string, runId: string): string {
  return (
    `(SELECT count(*)::int FROM runs r WHERE r.agent_id = ${agentId} AND r.status IN ('queued', 'active') ` +
    `AND r.id <> ${runId})`
  );
}

/**
 * SQL: the pending approval of an active run `r` (the call it waits on), read by the API with the run
 * (the `approvals` table is the approvals feature's; runs only read it). At most one is pending.
 */
const AWAITING_JOIN =
  'LEFT JOIN LATERAL (SELECT p.id, p.site_name, p.tool, p.scope, p.expires_at FROM approvals p ' +
  "WHERE p.run_id = r.id AND p.status = 'pending' ORDER BY p.requested_at DESC LIMIT 1) ap ON r.status = 'active'";
const AWAITING_COLUMNS =
  'ap.id AS "ap.id", ap.site_name AS "ap.site", ap.tool AS "ap.tool", ap.scope AS "ap.scope", ap.expires_at AS "ap.expiresAt"';

function awaitingOf(row: Record<string, unknown>): RunAwaiting | null {
  if (row['ap.id'] === null || row['ap.id'] === undefined) {
    return null;
  }
  return {
    approvalId: row['ap.id'] as string,
    site: row['ap.site'] as string,
    tool: row['ap.tool'] as string,
    scope: row['ap.scope'] as RunAwaiting['scope'],
    expiresAt: (row['ap.expiresAt'] as Date).toISOString(),
  };
}

/**
 * The first key of the transaction advisory lock that serialises the webhook inserts of one agent
 * (the second is the agent id's hash): an arbitrary constant, apart from the migrations' lock.
 */
const AGENT_QUEUE_LOCK = 0x5175;

/** A run whose row a statement has just marked ended (for the run metrics). */
export interface EndedRun {
  triggeredBy: RunTrigger;
  startedAt: Date | null;
  endedAt: Date;
}

/** SQL: what an end of a run returns (EndedRun's columns; a string, which TypeORM writes as it is). */
const ENDED_RETURNING = 'triggered_by, started_at, ended_at';

/** EndedRun of the rows an end of runs returned. */
export function endedRunsOf(raw: unknown): EndedRun[] {
  return (raw as Array<{ triggered_by: RunTrigger; started_at: Date | null; ended_at: Date }>).map((row) => ({
    triggeredBy: row.triggered_by,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  }));
}

/**
 * The SQL of the `runs` rows: their queue, reads, cancels, archives and retention. Raw SQL through the
 * row mapper where one statement must do several things (the insert that counts the queue), TypeORM
 * elsewhere. The statements of a run's own workflow (its start, its tool calls' site, its end) are in
 * RunExecutionRepository.
 */
@Injectable()
export class RunsRepository {
  private readonly runRows: RowMapper<RunEntity>;
  private readonly byIdQuery: string;
  /** Every column of a queued row, from the entity (created_at keeps its default). */
  private readonly insertColumns: Array<{ name: string; property: keyof RunEntity; json: boolean }>;
  private readonly insertQuery: string;
  private readonly insertCountingQuery: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.runRows = new RowMapper(dataSource, RunEntity, 'r');
    this.byIdQuery = `SELECT ${this.runRows.select()} FROM runs r WHERE r.id = $1`;
    this.insertColumns = dataSource
      .getMetadata(RunEntity)
      .columns.filter((c) => !c.isCreateDate)
      .map((c) => ({ name: c.databaseName, property: c.propertyName as keyof RunEntity, json: c.type === 'jsonb' }));
    const names = this.insertColumns.map((c) => `"${c.name}"`).join(', ');
    const values = this.insertColumns.map((c, i) => `$${i + 1}${c.json ? '::jsonb' : ''}`).join(', ');
    const param = (property: keyof RunEntity): string =>
      `$${this.insertColumns.findIndex((c) => c.property === property) + 1}`;
    const insert = `INSERT INTO runs (${names}) VALUES (${values}) ON CONFLICT DO NOTHING`;
    this.insertQuery = `${insert} RETURNING 0 AS ahead`;
    // RETURNING sees the rows committed before the statement; under the agent's lock (insertQueued)
    // that is every run of the agent queued before this one, so the count is the new run's position.
    this.insertCountingQuery = `${insert} RETURNING ${runsOpen(param('agentId'), param('id'))} AS ahead`;
  }

  private get runs() {
    return this.dataSource.getRepository(RunEntity);
  }

  /** A run row in memory (not saved). */
  create(row: Partial<RunEntity>): RunEntity {
    return this.runs.create(row);
  }

  /**
   * The one insert of a `runs` row. A row that conflicts (its id, or its agent's delivery id) inserts
   * nothing: `inserted` false. With `countAhead`, the insert counts the agent's runs queued or active
   * before it, under a transaction lock per agent: concurrent inserts for one agent take turns, and
   * each counts the ones committed before it, so their positions are distinct (without the lock, each
   * statement's snapshot misses the others and they all count the same). Other agents do not wait.
   */
  async insertQueued(row: RunEntity, countAhead: boolean): Promise<{ inserted: boolean; ahead: number }> {
    const params = this.insertColumns.map((c) => {
      const value = row[c.property] ?? null;
      return c.json && value !== null ? JSON.stringify(value) : value;
    });
    if (!countAhead) {
      const rows: unknown[] = await this.dataSource.query(preparedStatement('runs_insert', this.insertQuery), params);
      return { inserted: rows.length > 0, ahead: 0 };
    }
    return this.dataSource.transaction(async (em) => {
      await em.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [AGENT_QUEUE_LOCK, row.agentId]);
      // A statement after the lock: its snapshot sees every insert committed by the lock's last holder.
      const rows: Array<{ ahead: number }> = await em.query(
        preparedStatement('runs_insert_counting', this.insertCountingQuery),
        params,
      );
      return { inserted: rows.length > 0, ahead: rows[0]?.ahead ?? 0 };
    });
  }

  /** How many runs of the agent are queued or active ahead of this one. */
  async countAhead(run: RunEntity): Promise<number> {
    const rows: Array<{ n: number }> = await this.dataSource.query(`SELECT ${runsAhead('$1', '$2', '$3')} AS n`, [
      run.agentId,
      run.queuedAt,
      run.id,
    ]);
    return rows[0]?.n ?? 0;
  }

  /** Whether the agent has a run whose row is still queued or active. */
  hasOpenRun(agentId: string): Promise<boolean> {
    return this.runs.existsBy({ agentId, status: In(['queued', 'active']) });
  }

  /**
   * Rows still `queued`, without a delivery id, that were queued before `cutoff` (oldest first, at
   * most `limit`; of one agent if given): the candidates of a start that may never have reached the
   * agent's queue workflow (see unstarted-runs.ts). A webhook's row is never one: its sender redelivers. Read through the partial index of
   * open runs (runs_agent_open), however many runs the table holds.
   */
  async findUnstarted(cutoff: Date, limit: number, agentId?: string): Promise<Array<{ id: string; agentId: string }>> {
    const rows = await this.runs.find({
      select: { id: true, agentId: true },
      where: {
        status: 'queued',
        deliveryId: IsNull(),
        triggeredBy: Not('webhook'),
        queuedAt: LessThan(cutoff),
        ...(agentId === undefined ? {} : { agentId }),
      },
      order: { queuedAt: 'ASC' },
      take: limit,
    });
    return rows.map((r) => ({ id: r.id, agentId: r.agentId }));
  }

  /** Removes a row only while it is still queued (a run that has started stays). */
  async deleteIfQueued(id: string): Promise<void> {
    await this.runs.delete({ id, status: 'queued' });
  }

  /** A run by id (raw SQL through the row mapper: the end of every run reads it, to archive it). */
  async findById(id: string): Promise<RunEntity | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement('runs_by_id', this.byIdQuery),
      [id],
    );
    return rows[0] === undefined ? null : this.runRows.from(rows[0]);
  }

  findByIdOrFail(id: string): Promise<RunEntity> {
    return this.runs.findOneByOrFail({ id });
  }

  findByDelivery(agentId: string, deliveryId: string): Promise<RunEntity | null> {
    return this.runs.findOneBy({ agentId, deliveryId });
  }

  findByDeliveryOrFail(agentId: string, deliveryId: string): Promise<RunEntity> {
    return this.runs.findOneByOrFail({ agentId, deliveryId });
  }

  /**
   * The run, when its agent is one of the scope's, with the call it waits on (one statement: the run,
   * its agent's scope and its pending approval).
   */
  async findInScope(scope: Scope, runId: string): Promise<RunView | null> {
    const [name, agentInScope, key] =
      scope.workspace !== null
        ? ['runs_in_workspace', 'ag.workspace_id = $2', scope.workspace.id]
        : ['runs_in_personal', 'ag.user_id = $2 AND ag.workspace_id IS NULL', scope.user.id];
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement(
        name,
        `SELECT ${this.runRows.select()}, ${AWAITING_COLUMNS} FROM runs r ` +
          `JOIN agents ag ON ag.id = r.agent_id AND ${agentInScope} ${AWAITING_JOIN} WHERE r.id = $1`,
      ),
      [runId, key],
    );
    const row = rows[0];
    return row === undefined ? null : Object.assign(this.runRows.from(row)!, { awaiting: awaitingOf(row) });
  }

  /** The agent a scheduled firing names. */
  findAgent(agentId: string): Promise<AgentEntity | null> {
    return this.dataSource.getRepository(AgentEntity).findOneBy({ id: agentId });
  }

  /** A run taken out of its queue (or stopped) by a cancel; null when it had ended already. */
  async markCancelled(id: string): Promise<EndedRun | null> {
    return (await this.endRuns({ id, status: ['queued', 'active'] }, 'cancelled', null))[0] ?? null;
  }

  /** The agent's runs not ended (queued, or active in the queue that was just stopped), as cancelled. */
  cancelUnendedOfAgent(agentId: string): Promise<EndedRun[]> {
    return this.endRuns({ agentId, status: ['queued', 'active'] }, 'cancelled', null);
  }

  /** Raw SQL (every run ends through here): the rows of `where` still in a `status` of `from`, ended now. */
  private async endRuns(
    where: { id?: string; agentId?: string; status: string[] },
    status: FinishRunInput['status'],
    error: FinishRunInput['error'] | null,
  ): Promise<EndedRun[]> {
    const { id, agentId, status: from } = where;
    const [column, key] = id !== undefined ? ['id', id] : ['agent_id', agentId];
    if (key === undefined) {
      throw new Error('endRuns needs a run or an agent');
    }
    // TypeORM answers an UPDATE's raw query with [rows, affected].
    const [rows] = (await this.dataSource.query(
      preparedStatement(
        `runs_end_by_${column}`,
        `UPDATE runs SET status = $1, ended_at = now(), error = $2::jsonb WHERE ${column} = $3 AND status = ANY($4::text[]) ` +
          `RETURNING ${ENDED_RETURNING}`,
      ),
      [status, error === null ? null : JSON.stringify(error), key, from],
    )) as [unknown, number];
    return endedRunsOf(rows);
  }

  /** The agent's runs, newest first, `limit + 1` of them (see pageOf), an active one with the call it waits on. */
  async listForAgent(agentId: string, query: PageQuery): Promise<RunView[]> {
    const qb = this.runs
      .createQueryBuilder('r')
      .where('r.agent_id = :agentId', { agentId })
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC');
    keysetWhere(qb, 'r', query.cursor, 'DESC');
    const runs: RunView[] = await qb.take(query.limit + 1).getMany();
    const active = runs.filter((r) => r.status === 'active').map((r) => r.id);
    if (active.length > 0) {
      const rows: Array<Record<string, unknown>> = await this.dataSource.query(
        `SELECT r.id, ${AWAITING_COLUMNS} FROM runs r ${AWAITING_JOIN} WHERE r.id = ANY($1::uuid[])`,
        [active],
      );
      const byRun = new Map(rows.map((row) => [row.id as string, awaitingOf(row)]));
      for (const run of runs) {
        run.awaiting = byRun.get(run.id) ?? null;
      }
    }
    return runs;
  }

  /** The archived timeline of an ended run, if its workflow wrote one. */
  findArchive(runId: string): Promise<RunArchiveEntity | null> {
    return this.dataSource.getRepository(RunArchiveEntity).findOneBy({ runId });
  }

  /**
   * Writes an ended run's archive, only for the execution the run's row names (or, before its first
   * turn, its workflow id): a forged workflow cannot write another run's timeline. A retry of the same
   * execution rewrites it. The run's row records when (`archived_at`: it leaves the reconciler's
   * index). False when nothing was written (no such ended run: the agent was deleted).
   * `ifAbsent` (the run reconciler): an archive written already (by the run's own step, even at the
   * same moment) is kept as it is, and the row is marked archived either way.
   */
  async saveArchive(
    archive: {
      runId: string;
      workflowId: string;
      temporalRunId: string;
      timeline: TimelineEntry[];
    },
    ifAbsent = false,
  ): Promise<boolean> {
    const insert =
      'INSERT INTO run_archives (run_id, temporal_run_id, timeline) ' +
      'SELECT r.id, $2, $3::json FROM runs r WHERE r.id = $1 AND r.workflow_id = $4 ' +
      `AND r.status IN ${ENDED} AND COALESCE(r.temporal_run_id, $2) = $2 `;
    const rows: Array<{ written: boolean }> = await this.dataSource.query(
      ifAbsent
        ? preparedStatement(
            'runs_save_archive_if_absent',
            `WITH kept AS (${insert} ON CONFLICT (run_id) DO NOTHING RETURNING run_id) ` +
              `UPDATE runs SET archived_at = now() WHERE id = $1 AND status IN ${ENDED} ` +
              'RETURNING EXISTS (SELECT 1 FROM kept) AS written',
          )
        : preparedStatement(
            'runs_save_archive',
            `WITH kept AS (${insert} ` +
              'ON CONFLICT (run_id) DO UPDATE SET timeline = EXCLUDED.timeline, archived_at = now() ' +
              'WHERE run_archives.temporal_run_id = EXCLUDED.temporal_run_id RETURNING run_id, archived_at) ' +
              'UPDATE runs r SET archived_at = kept.archived_at FROM kept WHERE r.id = kept.run_id ' +
              'RETURNING true AS written',
          ),
      [archive.runId, archive.temporalRunId, JSON.stringify(archive.timeline), archive.workflowId],
    );
    // An UPDATE answers TypeORM's raw query with [rows, count].
    const [updated] = rows as unknown as [Array<{ written: boolean }>, number];
    return updated.some((row) => row.written);
  }

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
