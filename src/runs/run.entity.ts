import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const RUN_STATUSES = ['queued', 'active', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type RunTrigger = 'manual' | 'schedule' | 'webhook';

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  credits: number;
}

/**
 * The index row of a run. Its timeline is its Temporal workflow history while it runs; once it ends,
 * the copy its workflow archived (RunArchiveEntity), which outlives Temporal's retention.
 */
@Entity({ name: 'runs' })
export class RunEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'agent_id', type: 'uuid' })
  agentId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'text' })
  status: RunStatus;

  @Column({ name: 'triggered_by', type: 'text' })
  triggeredBy: RunTrigger;

  @Column({ type: 'jsonb', nullable: true })
  payload: unknown;

  @Column({ type: 'text', nullable: true })
  input: string | null;

  @Column({ name: 'system_prompt_source', type: 'text' })
  systemPromptSource: 'agent' | 'webhook_action';

  @Column({ name: 'delivery_id', type: 'text', nullable: true })
  deliveryId: string | null;

  @Column({ name: 'workflow_id', type: 'text' })
  workflowId: string;

  @Column({ name: 'temporal_run_id', type: 'text', nullable: true })
  temporalRunId: string | null;

  /** The run's tool set (run_tool_sets), from its start on: its workflow carries only this hash. */
  @Column({ name: 'tool_set_hash', type: 'text', nullable: true })
  toolSetHash: string | null;

  @Column({ type: 'jsonb', nullable: true })
  error: { error: string; code: string } | null;

  @Column({ type: 'jsonb' })
  usage: RunUsage;

  @Column({ name: 'queued_at', type: 'timestamptz', precision: 3 })
  queuedAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', precision: 3, nullable: true })
  startedAt: Date | null;

  @Column({ name: 'ended_at', type: 'timestamptz', precision: 3, nullable: true })
  endedAt: Date | null;

  /** When its timeline was archived (run_archives); null until then (see RunReconcileService). */
  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3, nullable: true })
  archivedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
