import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { AgentEntity } from '../agents/agent.entity.js';
import { preparedStatement } from '../common/database/prepared-statement.js';
import { RowMapper } from '../common/database/row-mapper.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { CredentialEntity } from '../vault/credential.entity.js';
import { SiteEntity } from '../vault/site.entity.js';
import { inOwnersVaultSql } from '../workspaces/scope.js';
import type { CallToolInput, FinishRunInput, RunTrigger, RunTriggerFields } from '../../workflows/contracts.js';
import { type EndedRun, endedRunsOf } from './runs.repository.js';

/** What the start of a run read in its one statement (see RunExecutionRepository.start). */
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

/**
 * A run's end as its workflow records it ($1 status, $2 error, $3 the run, $4 the statuses it may end
 * from, $5/$6 the asking workflow and execution, from Temporal). Only the workflow that runs it may end
 * it, the agent's queue `agent-<agentId>`, and, once the run has started, only the execution its row
 * recorded. `bound`: whether the asker is that workflow (null: no such run); the ended columns are
 * null when no row changed.
 */
const FINISH_QUERY =
  "WITH target AS (SELECT id, ($5 = 'agent-' || agent_id " +
  'AND (temporal_run_id IS NULL OR (workflow_id = $5 AND temporal_run_id = $6))) AS bound FROM runs WHERE id = $3), ' +
  'ended AS (UPDATE runs r SET status = $1, ended_at = now(), error = $2::jsonb FROM target t ' +
  'WHERE r.id = t.id AND t.bound AND r.status = ANY($4::text[]) ' +
  'RETURNING r.triggered_by, r.started_at, r.ended_at) ' +
  'SELECT (SELECT bound FROM target) AS bound, e.triggered_by, e.started_at, e.ended_at ' +
  'FROM (SELECT 1) one LEFT JOIN ended e ON true';

/**
 * The SQL a run's workflow runs through its activities, each one prepared statement that does what
 * would otherwise take several round trips: the start that moves the run to active and reads its
 * agent, owner and sites; the site of a tool call with what decides whether the run may use it; the
 * end, only by the execution that runs it.
 */
@Injectable()
export class RunExecutionRepository {
  private readonly agentRows: RowMapper<AgentEntity>;
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly credentialRows: RowMapper<CredentialEntity>;
  private readonly startQuery: string;
  private readonly toolSiteQuery: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.agentRows = new RowMapper(dataSource, AgentEntity, 'a');
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.credentialRows = new RowMapper(dataSource, CredentialEntity, 'c');
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
}
