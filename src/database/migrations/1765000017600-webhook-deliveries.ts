import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The webhook deliveries an agent received, accepted and refused, for its owner to see why a sender's
 * call failed: when, the HTTP status, the error code, the names of the fields a refused payload got
 * wrong, the request id, and the run an accepted one queued (the run holds the payload). Never the
 * secret, the headers or a refused payload. Bounded: the webhooks feature keeps the newest rows of
 * each agent (WEBHOOK_DELIVERIES_KEPT); they go with their agent.
 */
export class WebhookDeliveries1765000017600 implements MigrationInterface {
  name = 'WebhookDeliveries1765000017600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        status_code smallint NOT NULL,
        code text,
        fields text[] NOT NULL DEFAULT '{}',
        request_id text,
        run_id uuid REFERENCES runs(id) ON DELETE SET NULL,
        duplicate boolean NOT NULL DEFAULT false
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_agent ON webhook_deliveries (agent_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_run ON webhook_deliveries (run_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
  }
}
