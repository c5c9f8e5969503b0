import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An assistant reply keeps its parts in the order the turn happened (each model call's text, each
 * tool call by its id in `tool_calls`), so that a reloaded conversation shows a turn as its stream
 * did. Rows saved before have none (NULL): the chat feature reads their parts from the model
 * messages they kept (`derivedParts` in src/chat/chat-parts.ts), so old conversations stay readable.
 */
export class ChatMessageParts1764960000000 implements MigrationInterface {
  name = 'ChatMessageParts1764960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_messages ADD COLUMN parts jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_messages DROP COLUMN parts`);
  }
}
