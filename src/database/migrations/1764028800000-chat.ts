import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Chat1764028800000 implements MigrationInterface {
  name = 'Chat1764028800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE chat_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        workspace_id uuid,
        token_hash text NOT NULL UNIQUE,
        title text,
        sites jsonb NOT NULL,
        expires_at timestamptz(3) NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE chat_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        seq bigserial,
        role text NOT NULL CHECK (role IN ('user', 'assistant')),
        content text NOT NULL,
        tool_calls jsonb,
        model_messages jsonb,
        usage jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX chat_messages_session ON chat_messages (session_id, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE chat_messages`);
    await q.query(`DROP TABLE chat_sessions`);
  }
}
