import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Invitations to a workspace: an admin invites an email address, and the user with that address
 * becomes a member only when they accept. A row is a pending invitation (accepting, declining and
 * revoking delete it); one per workspace and address, which inviting again renews. By `email` the
 * signed-in user finds theirs.
 */
export class WorkspaceInvitations1764800000100 implements MigrationInterface {
  name = 'WorkspaceInvitations1764800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspace_invitations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
        invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL,
        CONSTRAINT workspace_invitations_one_per_email UNIQUE (workspace_id, email)
      )`);
    await q.query(`CREATE INDEX workspace_invitations_email ON workspace_invitations (email, expires_at)`);
    await q.query(`CREATE INDEX workspace_invitations_invited_by ON workspace_invitations (invited_by)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE workspace_invitations`);
  }
}
