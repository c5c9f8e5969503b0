import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { ApprovalScope, NotificationEvent } from '../../workflows/contracts.js';

export const TRIGGER_TYPES = ['manual', 'scheduled', 'webhook'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const WEBHOOK_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export type WebhookFieldType = (typeof WEBHOOK_FIELD_TYPES)[number];

export interface WebhookField {
  name: string;
  type: WebhookFieldType;
  description?: string;
  required?: boolean;
}

@Entity({ name: 'agents' })
export class AgentEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'workspace_id', type: 'uuid', nullable: true })
  workspaceId: string | null;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'system_prompt', type: 'text' })
  systemPrompt: string;

  @Column({ name: 'site_ids', type: 'uuid', array: true })
  siteIds: string[];

  @Column({ type: 'text', nullable: true })
  model: string | null;

  @Column({ name: 'trigger_type', type: 'text' })
  triggerType: TriggerType;

  @Column({ type: 'text', nullable: true })
  cron: string | null;

  @Column({ type: 'text', nullable: true })
  timezone: string | null;

  @Column({ name: 'allow_action_override', type: 'boolean', default: false })
  allowActionOverride: boolean;

  @Column({ name: 'webhook_schema', type: 'jsonb', nullable: true })
  webhookSchema: WebhookField[] | null;

  /** SHA-256 of the webhook secret; the secret itself is shown once, when it is generated. */
  @Column({ name: 'webhook_secret_hash', type: 'text', nullable: true })
  webhookSecretHash: string | null;

  /** The scopes whose calls wait for a person's decision; null: none (workflows/approvals.ts). */
  @Column({ name: 'approval_scopes', type: 'text', array: true, nullable: true })
  approvalScopes: ApprovalScope[] | null;

  /** How long a call waits for a decision; null: APPROVAL_TIMEOUT.defaultSeconds. */
  @Column({ name: 'approval_timeout_seconds', type: 'integer', nullable: true })
  approvalTimeoutSeconds: number | null;

  /** Where notifications go (HTTPS); null: none. */
  @Column({ name: 'notify_url', type: 'text', nullable: true })
  notifyUrl: string | null;

  @Column({ name: 'notify_events', type: 'text', array: true, nullable: true })
  notifyEvents: NotificationEvent[] | null;

  /** The Standard Webhooks signing secret (`whsec_…`), encrypted with the vault key; shown once. */
  @Column({ name: 'notify_secret', type: 'text', nullable: true })
  notifySecret: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
