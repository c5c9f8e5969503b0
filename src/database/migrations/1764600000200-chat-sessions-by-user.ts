import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * GET /api/sessions lists a user's live sessions newest first: without an index on the owner, each
 * page read every session of every user.
 */
export class ChatSessionsByUser1764600000200 implements MigrationInterface {
  name = 'ChatSessionsByUser1764600000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX chat_sessions_user ON chat_sessions (user_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX chat_sessions_user`);
  }
}
