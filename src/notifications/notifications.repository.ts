import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { NotificationEvent } from '../../workflows/contracts.js';

/** What one notification reads: the agent's notify settings, the run and (approval_requested) the approval. */
export interface NotificationSource {
  agent: {
    id: string;
    name: string;
    notifyUrl: string | null;
    notifyEvents: NotificationEvent[] | null;
    /** Sealed (notify-secret.ts). */
    notifySecret: string | null;
  };
  run: {
    id: string;
    status: string;
    triggeredBy: string;
    startedAt: Date | null;
    endedAt: Date | null;
    error: { error: string; code: string } | null;
    /** The archived timeline's last entry (its `output` when the run completed); null until archived. */
    lastEntry: { type?: string; output?: string } | null;
  } | null;
  approval: {
    id: string;
    siteId: string | null;
    siteName: string;
    tool: string;
    scope: string;
    input: unknown;
    expiresAt: Date;
  } | null;
}

/**
 * One statement: the agent (agents), its run (runs, with the archive's last timeline entry) and the
 * approval (approvals), each joined only when it belongs to the one before. Reads only: these tables
 * are the agents', runs' and approvals' features' to write.
 */
const SOURCE_QUERY =
  'SELECT a.id AS agent_id, a.name AS agent_name, a.notify_url, a.notify_events, a.notify_secret, ' +
  'r.id AS run_id, r.status AS run_status, r.triggered_by, r.started_at, r.ended_at, r.error AS run_error, ' +
  'ar.timeline -> -1 AS last_entry, ' +
  'ap.id AS approval_id, ap.site_id, ap.site_name, ap.tool, ap.scope, ap.input, ap.expires_at ' +
  'FROM agents a ' +
  'LEFT JOIN runs r ON r.id = $2 AND r.agent_id = a.id ' +
  'LEFT JOIN run_archives ar ON ar.run_id = r.id ' +
  'LEFT JOIN approvals ap ON ap.id = $3::uuid AND ap.run_id = r.id ' +
  'WHERE a.id = $1';

interface Row {
  agent_id: string;
  agent_name: string;
  notify_url: string | null;
  notify_events: NotificationEvent[] | null;
  notify_secret: string | null;
  run_id: string | null;
  run_status: string;
  triggered_by: string;
  started_at: Date | null;
  ended_at: Date | null;
  run_error: { error: string; code: string } | null;
  last_entry: { type?: string; output?: string } | null;
  approval_id: string | null;
  site_id: string | null;
  site_name: string;
  tool: string;
  scope: string;
  input: unknown;
  expires_at: Date;
}

@Injectable()
export class NotificationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when the agent is gone. */
  async source(agentId: string, runId: string, approvalId: string | undefined): Promise<NotificationSource | null> {
    const rows: Row[] = await this.dataSource.query(SOURCE_QUERY, [agentId, runId, approvalId ?? null]);
    const row = rows[0];
    if (row === undefined) {
      return null;
    }
    return {
      agent: {
        id: row.agent_id,
        name: row.agent_name,
        notifyUrl: row.notify_url,
        notifyEvents: row.notify_events,
        notifySecret: row.notify_secret,
      },
      run:
        row.run_id === null
          ? null
          : {
              id: row.run_id,
              status: row.run_status,
              triggeredBy: row.triggered_by,
              startedAt: row.started_at,
              endedAt: row.ended_at,
              error: row.run_error,
              lastEntry: row.last_entry,
            },
      approval:
        row.approval_id === null
          ? null
          : {
              id: row.approval_id,
              siteId: row.site_id,
              siteName: row.site_name,
              tool: row.tool,
              scope: row.scope,
              input: row.input,
              expiresAt: row.expires_at,
            },
    };
  }
}
