import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A chat reply's brief model messages (`chat_messages.model_brief`): its model messages with each large
 * tool result replaced by a short placeholder, null when it has none. A turn reads the whole model
 * messages of the session's newest messages only and the brief of the older ones, so its read stays
 * small however long the session grows (src/chat/chat-context.ts). Rows saved before have none: they
 * are read whole, as before.
 */
export class ChatModelBrief1765000021300 implements MigrationInterface {
  name = 'ChatModelBrief1765000021300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_messages ADD COLUMN model_brief jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_messages DROP COLUMN model_brief`);
  }
}
