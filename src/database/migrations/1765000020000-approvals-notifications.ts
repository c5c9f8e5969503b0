import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Approvals and notifications. An agent gains its approval policy (`approval_scopes`: the scopes whose
 * calls wait for a person, null = none; `approval_timeout_seconds`) and its notifications (`notify_url`,
 * `notify_events`, and `notify_secret`, the Standard Webhooks signing secret, encrypted with the vault
 * key as credentials are). `approvals` holds one row per call that waited: written by the run's
 * workflow (pending when it asks, then its outcome), read by the API's inbox and the run's `awaiting`.
 */
export class ApprovalsNotifications1765000020000 implements MigrationInterface {
  name = 'ApprovalsNotifications1765000020000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE agents
        ADD COLUMN approval_scopes text[],
        ADD COLUMN approval_timeout_seconds integer,
        ADD COLUMN notify_url text,
        ADD COLUMN notify_events text[],
        ADD COLUMN notify_secret text`);
    await q.query(`
      CREATE TABLE approvals (
        id uuid PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
        site_id uuid,
        site_name text NOT NULL,
        tool text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('write', 'delete', 'admin')),
        input jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
        requested_at timestamptz(3) NOT NULL,
        expires_at timestamptz(3) NOT NULL,
        decided_at timestamptz(3),
        decided_by uuid REFERENCES users(id) ON DELETE SET NULL,
        decided_by_name text,
        note text
      )`);
    await q.query(`CREATE INDEX approvals_user_requested ON approvals (user_id, requested_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX approvals_workspace_requested ON approvals (workspace_id, requested_at DESC, id DESC) WHERE workspace_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX approvals_run ON approvals (run_id, requested_at)`);
    await q.query(`CREATE INDEX approvals_pending ON approvals (user_id) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE approvals`);
    await q.query(`
      ALTER TABLE agents
        DROP COLUMN approval_scopes,
        DROP COLUMN approval_timeout_seconds,
        DROP COLUMN notify_url,
        DROP COLUMN notify_events,
        DROP COLUMN notify_secret`);
  }
}
