import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource } from 'typeorm';
import { AgentEntity } from '../agents/agent.entity.js';
import { type PageQuery, keysetWhere } from '../common/pagination.js';
import { RowMapper } from '../common/database/row-mapper.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { CredentialEntity } from '../vault/credential.entity.js';
import { SiteEntity } from '../vault/site.entity.js';
import { inOwnersVaultSql, type Scope, scopeWhere } from '../workspaces/scope.js';
import type { CallToolInput, FinishRunInput, RunTrigger, RunTriggerFields } from '../../workflows/contracts.js';
import { RunArchiveEntity } from './run-archive.entity.js';
import { RunEntity } from './run.entity.js';
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

/** What the start of a run read in its one statement (see RunsRepository.start). */
export interface StartedRun {
  /** Whether this statement moved the run from queued to active (false: a retried turn 1 found it active). */
  firstStart: boolean;
  /** The trigger and prompt source as the API recorded them. */
  triggeredBy: RunTrigger;
  promptSource: 'agent' | 'webhook_action';
  /** Null when the agent was deleted. */
  agent: AgentEntity | null;
  /** The agent's sites found in its own vault (in no particular order). */
  sites: SiteEntity[];
  ownerCredits: number;
  tierOwner: { tier: Tier; subscriptionStatus: SubscriptionStatus };
  /** What triggered the run, as its row records it (the run's first message is built from it). */
  trigger: RunTriggerFields;
}

/** A run whose row a statement has just marked ended (for the run metrics). */
export interface EndedRun {
  triggeredBy: RunTrigger;
  startedAt: Date | null;
  endedAt: Date;
}

/** SQL: what an end of a run returns (EndedRun's columns; a string, which TypeORM writes as it is). */
const ENDED_RETURNING = 'triggered_by, started_at, ended_at';

/**
 * A run's end as its workflow records it ($1 status, $2 error, $3 the run, $4 the statuses it may end
 * from, $5/$6 the asking workflow and execution, from Temporal). Only the workflow that runs it may end
 * it, the agent's queue `agent-<agentId>`, and, once the run has started, only the execution its row
 * recorded. `bound`: whether the asker is that
 * workflow (null: no such run); the ended columns are null when no row changed.
 */
const FINISH_QUERY =
  "WITH target AS (SELECT id, ($5 = 'agent-' || agent_id " +
  'AND (temporal_run_id IS NULL OR (workflow_id = $5 AND temporal_run_id = $6))) AS bound FROM runs WHERE id = $3), ' +
  'ended AS (UPDATE runs r SET status = $1, ended_at = now(), error = $2::jsonb FROM target t ' +
  'WHERE r.id = t.id AND t.bound AND r.status = ANY($4::text[]) ' +
  'RETURNING r.triggered_by, r.started_at, r.ended_at) ' +
  'SELECT (SELECT bound FROM target) AS bound, e.triggered_by, e.started_at, e.ended_at ' +
  'FROM (SELECT 1) one LEFT JOIN ended e ON true';

function endedRunsOf(raw: unknown): EndedRun[] {
  return (raw as Array<{ triggered_by: RunTrigger; started_at: Date | null; ended_at: Date }>).map((row) => ({
    triggeredBy: row.triggered_by,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  }));
}

/**
 * The SQL of the `runs` rows. Raw SQL through the row mapper where one statement must do several
 * things (the insert that counts the queue, the start that reads the agent), TypeORM elsewhere.
 */
@Injectable()
export class RunsRepository {
  private readonly agentRows: RowMapper<AgentEntity>;
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly credentialRows: RowMapper<CredentialEntity>;
  private readonly startQuery: string;
  private readonly toolSiteQuery: string;
  private readonly runRows: RowMapper<RunEntity>;
  private readonly byIdQuery: string;
  /** Every column of a queued row, from the entity (created_at keeps its default). */
  private readonly insertColumns: Array<{ name: string; property: keyof RunEntity; json: boolean }>;
  private readonly insertQuery: string;
  private readonly insertCountingQuery: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.agentRows = new RowMapper(dataSource, AgentEntity, 'a');
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.credentialRows = new RowMapper(dataSource, CredentialEntity, 'c');
    this.runRows = new RowMapper(dataSource, RunEntity, 'r');
    this.byIdQuery = `SELECT ${this.runRows.select()} FROM runs r WHERE r.id = $1`;
    // A run's tool call ($1: the site, $2: the run, $3: the user the activity's input names).
    const owned = `(a.id IS NOT NULL AND ${inOwnersVaultSql('s', 'a')})`;
    this.toolSiteQuery =
      `SELECT ${this.siteRows.select()}, ${this.credentialRows.select()}, r.status AS run_status, ` +
      `(s.id = ANY(a.site_ids)) AS listed, ${owned} AS owned FROM sites s ` +
      'LEFT JOIN runs r ON r.id = $2 AND r.user_id = $3 LEFT JOIN agents a ON a.id = r.agent_id ' +
      "LEFT JOIN site_credentials c ON c.site_id = s.id AND r.status = 'active' AND s.id = ANY(a.site_ids) " +
      `AND ${owned} WHERE s.id = $1`;
    // The run's start ($2: the run, $3: its user, $4/$5: the asking workflow and execution; the asking
    // workflow must be the agent's queue `agent-<agentId>`, which runs each run itself) and, in the
    // same statement, the agent, its owner's balance, the tier owner's tier and the agent's sites (in
    // its own scope): a row per site, or one row with no site; no agent row when it was deleted.
    // The tier that counts is the workspace owner's for a workspace agent, else the agent owner's.
    // `previous` reads the row as it was before the update (every part of one statement sees the same
    // snapshot): whether this statement is the run's start or a retried turn 1's.
    this.startQuery =
      'WITH previous AS (SELECT status FROM runs WHERE id = $2), ' +
      "started AS (UPDATE runs SET status = 'active', workflow_id = $4, temporal_run_id = $5, " +
      'started_at = COALESCE(started_at, now()) ' +
      "WHERE id = $2 AND agent_id = $1 AND user_id = $3 AND $4 = 'agent-' || agent_id " +
      "AND (status = 'queued' OR (status = 'active' AND temporal_run_id = $5)) " +
      'RETURNING triggered_by, system_prompt_source, input, payload, queued_at) ' +
      'SELECT st.triggered_by AS run_triggered_by, st.system_prompt_source AS run_prompt_source, ' +
      '(SELECT status FROM previous) AS run_previous_status, st.queued_at AS run_queued_at, ' +
      // The trigger's text and payload (up to the webhook body limit) once, not on every site's row.
      'row_number() OVER () = 1 AS run_first_row, ' +
      'CASE WHEN row_number() OVER () = 1 THEN st.input END AS run_input, ' +
      'CASE WHEN row_number() OVER () = 1 THEN st.payload END AS run_payload, ' +
      `${this.agentRows.select()}, ${this.siteRows.select()}, ` +
      'u.credits AS owner_credits, t.tier AS tier_owner_tier, t.subscription_status AS tier_owner_status ' +
      'FROM (SELECT 1) one LEFT JOIN started st ON true LEFT JOIN (agents a JOIN users u ON u.id = a.user_id LEFT JOIN workspaces w ON w.id = a.workspace_id ' +
      'JOIN users t ON t.id = COALESCE(w.owner_id, a.user_id)) ON a.id = $1 ' +
      `LEFT JOIN sites s ON s.id = ANY(a.site_ids) AND ${inOwnersVaultSql('s', 'a')}`;
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
    // RETURNING sees the rows committed before the statement: the count is the new run's position.
    this.insertCountingQuery = `${insert} RETURNING ${runsAhead(param('agentId'), param('queuedAt'), param('id'))} AS ahead`;
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
   * nothing: `inserted` false. With `countAhead`, the same statement counts the runs ahead of it.
   */
  async insertQueued(row: RunEntity, countAhead: boolean): Promise<{ inserted: boolean; ahead: number }> {
    const params = this.insertColumns.map((c) => {
      const value = row[c.property] ?? null;
      return c.json && value !== null ? JSON.stringify(value) : value;
    });
    const rows: Array<{ ahead: number }> = await this.dataSource.query(
      countAhead
        ? preparedStatement('runs_insert_counting', this.insertCountingQuery)
        : preparedStatement('runs_insert', this.insertQuery),
      params,
    );
    return { inserted: rows.length > 0, ahead: rows[0]?.ahead ?? 0 };
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

  /** The run, when its agent is one of the scope's. */
  async findInScope(scope: Scope, runId: string): Promise<RunEntity | null> {
    const run = await this.runs.findOneBy({ id: runId });
    if (run === null) {
      return null;
    }
    const agent = await this.dataSource.getRepository(AgentEntity).findOneBy({ id: run.agentId, ...scopeWhere(scope) });
    return agent === null ? null : run;
  }

  /** The agent a scheduled firing names. */
  findAgent(agentId: string): Promise<AgentEntity | null> {
    return this.dataSource.getRepository(AgentEntity).findOneBy({ id: agentId });
  }

  /**
   * Moves a queued run (or the same execution's active one) to active and reads what its first model
   * turn needs, in one statement; null when no run matched (nothing was written).
   */
  async start(
    ids: { agentId: string; runId: string; userId: string },
    execution: { workflowId: string; runId: string },
  ): Promise<StartedRun | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement('runs_start', this.startQuery),
      [ids.agentId, ids.runId, ids.userId, execution.workflowId, execution.runId],
    );
    const started = rows.find((row) => row.run_first_row === true);
    if (started?.run_triggered_by === null || started?.run_triggered_by === undefined) {
      return null;
    }
    return {
      firstStart: started.run_previous_status === 'queued',
      triggeredBy: started.run_triggered_by as RunTrigger,
      promptSource: started.run_prompt_source as StartedRun['promptSource'],
      agent: this.agentRows.from(started),
      sites: rows.map((row) => this.siteRows.from(row)).filter((site): site is SiteEntity => site !== null),
      ownerCredits: Number(started.owner_credits),
      tierOwner: {
        tier: started.tier_owner_tier as Tier,
        subscriptionStatus: started.tier_owner_status as SubscriptionStatus,
      },
      trigger: {
        triggeredBy: started.run_triggered_by as RunTrigger,
        input: (started.run_input as string | null) ?? null,
        payload: started.run_payload ?? null,
        queuedAt: started.run_queued_at as Date,
      },
    };
  }

  /**
   * The site a run's tool call names, with what decides whether the run may use it, in one round
   * trip: the run's status (null: no run of this user), whether the site is one of its agent's
   * (`listed`) and in the agent's vault (`owned`), and the site's credential, joined only when all
   * three hold (a refused call never reads it; null: the site has none). No site: undefined.
   */
  async siteForToolCall(input: Pick<CallToolInput, 'siteId' | 'runId' | 'userId'>): Promise<{
    site: SiteEntity | undefined;
    found: { run_status: string | null; listed: boolean | null; owned: boolean | null } | undefined;
    credential: CredentialEntity | null;
  }> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement('runs_tool_site', this.toolSiteQuery),
      [input.siteId, input.runId, input.userId],
    );
    const row = rows[0];
    if (row === undefined) {
      return { site: undefined, found: undefined, credential: null };
    }
    return {
      site: this.siteRows.from(row) ?? undefined,
      found: {
        run_status: row.run_status as string | null,
        listed: row.listed as boolean | null,
        owned: row.owned as boolean | null,
      },
      credential: this.credentialRows.from(row),
    };
  }

  /**
   * Records how a run ended, once: a run already ended keeps its status (a model turn that answers
   * after its run was cancelled must not turn it into `completed`).
   */
  async finish(
    input: FinishRunInput,
    execution: { workflowId: string; runId: string },
  ): Promise<{ ended: EndedRun | null; bound: boolean | null }> {
    const error = input.error ?? null;
    const rows = (await this.dataSource.query(preparedStatement('runs_finish', FINISH_QUERY), [
      input.status,
      error === null ? null : JSON.stringify(error),
      input.runId,
      ['queued', 'active'],
      execution.workflowId,
      execution.runId,
    ])) as Array<{ bound: boolean | null; triggered_by: RunTrigger | null }>;
    const row = rows[0];
    const ended = row !== undefined && row.triggered_by !== null ? endedRunsOf([row])[0]! : null;
    return { ended, bound: row?.bound ?? null };
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

  /** The agent's runs, newest first, `limit + 1` of them (see pageOf). */
  listForAgent(agentId: string, query: PageQuery): Promise<RunEntity[]> {
    const qb = this.runs
      .createQueryBuilder('r')
      .where('r.agent_id = :agentId', { agentId })
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC');
    keysetWhere(qb, 'r', query.cursor, 'DESC');
    return qb.take(query.limit + 1).getMany();
  }

  /** The archived timeline of an ended run, if its workflow wrote one. */
  findArchive(runId: string): Promise<RunArchiveEntity | null> {
    return this.dataSource.getRepository(RunArchiveEntity).findOneBy({ runId });
  }

  /**
   * Writes an ended run's archive, only for the execution the run's row names (or, before its first
   * turn, its workflow id): a forged workflow cannot write another run's timeline. A retry of the same
   * execution rewrites it. False when nothing was written (no such ended run: the agent was deleted).
   */
  async saveArchive(archive: {
    runId: string;
    workflowId: string;
    temporalRunId: string;
    timeline: TimelineEntry[];
  }): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      preparedStatement(
        'runs_save_archive',
        'INSERT INTO run_archives (run_id, temporal_run_id, timeline) ' +
          'SELECT r.id, $2, $3::json FROM runs r WHERE r.id = $1 AND r.workflow_id = $4 ' +
          `AND r.status IN ${ENDED} AND COALESCE(r.temporal_run_id, $2) = $2 ` +
          'ON CONFLICT (run_id) DO UPDATE SET timeline = EXCLUDED.timeline, archived_at = now() ' +
          'WHERE run_archives.temporal_run_id = EXCLUDED.temporal_run_id RETURNING run_id',
      ),
      [archive.runId, archive.temporalRunId, JSON.stringify(archive.timeline), archive.workflowId],
    );
    return rows.length > 0;
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
