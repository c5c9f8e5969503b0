import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class AgentsRuns1763942400000 implements MigrationInterface {
  name = 'AgentsRuns1763942400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid,
        name text NOT NULL,
        system_prompt text NOT NULL,
        site_ids uuid[] NOT NULL,
        model text,
        trigger_type text NOT NULL CHECK (trigger_type IN ('manual', 'scheduled', 'webhook')),
        cron text,
        timezone text,
        allow_action_override boolean NOT NULL DEFAULT false,
        webhook_schema jsonb,
        webhook_secret_hash text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agents_user_created ON agents (user_id, created_at, id)`);
    await q.query(`
      CREATE TABLE runs (
        id uuid PRIMARY KEY,
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('queued', 'active', 'completed', 'failed', 'cancelled')),
        triggered_by text NOT NULL CHECK (triggered_by IN ('manual', 'schedule', 'webhook')),
        payload jsonb,
        input text,
        system_prompt_source text NOT NULL CHECK (system_prompt_source IN ('agent', 'webhook_action')),
        delivery_id text,
        workflow_id text NOT NULL,
        temporal_run_id text,
        error jsonb,
        usage jsonb NOT NULL DEFAULT '{"inputTokens":0,"outputTokens":0,"credits":0}',
        queued_at timestamptz(3) NOT NULL DEFAULT now(),
        started_at timestamptz(3),
        ended_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX runs_agent_created ON runs (agent_id, created_at DESC, id DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX runs_agent_delivery ON runs (agent_id, delivery_id) WHERE delivery_id IS NOT NULL`,
    );
    // Every change of a balance is a row; `reference` makes a charge idempotent (activity retries).
    await q.query(`
      CREATE TABLE credit_ledger (
        id bigserial PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        delta bigint NOT NULL,
        reason text NOT NULL,
        reference text UNIQUE,
        balance_after bigint NOT NULL CHECK (balance_after >= 0),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credit_ledger_user ON credit_ledger (user_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE credit_ledger`);
    await q.query(`DROP TABLE runs`);
    await q.query(`DROP TABLE agents`);
  }
}
