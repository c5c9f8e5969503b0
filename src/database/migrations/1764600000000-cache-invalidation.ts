import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Cross-process cache invalidation (src/common/cache): every change of a `users` row and every
 * revoked token sends `user:<id>` or `token:<jti>` on the `agentsite_cache` channel. Triggers, not
 * the writers, so no writer can forget (the admin command, the charge function, raw SQL); PostgreSQL
 * delivers the notification when the writing transaction commits, and not at all when it rolls back.
 */
export class CacheInvalidation1764600000000 implements MigrationInterface {
  name = 'CacheInvalidation1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION agentsite_cache_notify_user() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('agentsite_cache', 'user:' || OLD.id::text);
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER users_cache_invalidation AFTER UPDATE OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION agentsite_cache_notify_user()`);
    await q.query(`
      CREATE FUNCTION agentsite_cache_notify_token() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('agentsite_cache', 'token:' || NEW.jti::text);
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER revoked_tokens_cache_invalidation AFTER INSERT OR UPDATE ON revoked_tokens
        FOR EACH ROW EXECUTE FUNCTION agentsite_cache_notify_token()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER revoked_tokens_cache_invalidation ON revoked_tokens');
    await q.query('DROP FUNCTION agentsite_cache_notify_token()');
    await q.query('DROP TRIGGER users_cache_invalidation ON users');
    await q.query('DROP FUNCTION agentsite_cache_notify_user()');
  }
}
