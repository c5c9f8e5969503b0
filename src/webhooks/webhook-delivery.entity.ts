import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One delivery to an agent's webhook URL, accepted or refused (see the webhook-deliveries migration):
 * what its owner needs to see why a sender's call failed, and nothing the sender sent.
 */
@Entity({ name: 'webhook_deliveries' })
export class WebhookDeliveryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'agent_id', type: 'uuid' })
  agentId: string;

  /** When the delivery was answered. */
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  /** The HTTP status of the answer: 202 accepted, else the refusal's. */
  @Column({ name: 'status_code', type: 'smallint' })
  statusCode: number;

  /** The refusal's error code; null when accepted. */
  @Column({ type: 'text', nullable: true })
  code: string | null;

  /** The names of the fields a refused payload got wrong (422, 400): names only, never values. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  fields: string[];

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId: string | null;

  /** The run an accepted delivery queued (the first delivery's for a repeated delivery id). */
  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId: string | null;

  /** A repeated X-Webhook-Delivery-Id: answered with the first delivery's run. */
  @Column({ type: 'boolean', default: false })
  duplicate: boolean;
}
