import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ApprovalScope, ApprovalStatus } from '../../workflows/contracts.js';

/**
 * A call of a run that waited for a person's decision (see workflows/approvals.ts). Written by the
 * run's workflow through its activities (pending when asked, then the outcome); the API reads it for
 * the inbox (GET /api/approvals) and the run's `awaiting`. The decision itself goes to the workflow
 * (its Update), never straight to this row.
 */
@Entity({ name: 'approvals' })
export class ApprovalEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  @Column({ name: 'agent_id', type: 'uuid' })
  agentId: string;

  /** The agent's owner (the run's user). */
  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'workspace_id', type: 'uuid', nullable: true })
  workspaceId: string | null;

  @Column({ name: 'site_id', type: 'uuid', nullable: true })
  siteId: string | null;

  @Column({ name: 'site_name', type: 'text' })
  siteName: string;

  @Column({ type: 'text' })
  tool: string;

  @Column({ type: 'text' })
  scope: ApprovalScope;

  @Column({ type: 'jsonb' })
  input: unknown;

  @Column({ type: 'text', default: 'pending' })
  status: ApprovalStatus;

  @Column({ name: 'requested_at', type: 'timestamptz', precision: 3 })
  requestedAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ name: 'decided_at', type: 'timestamptz', precision: 3, nullable: true })
  decidedAt: Date | null;

  @Column({ name: 'decided_by', type: 'uuid', nullable: true })
  decidedBy: string | null;

  @Column({ name: 'decided_by_name', type: 'text', nullable: true })
  decidedByName: string | null;

  @Column({ type: 'text', nullable: true })
  note: string | null;
}
