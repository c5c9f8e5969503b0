import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The users trigger's function as CacheInvalidation1764600000000 made it (for down()). */
const DROP_ONLY = `
  CREATE OR REPLACE FUNCTION agentsite_cache_notify_user() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('agentsite_cache', 'user:' || OLD.id::text);
    RETURN NULL;
  END
  $$`;

/**
 * A change of a user's balance alone (a credit charge after every chat turn and model turn, a grant,
 * a purchase) sends `credits:<id>:<balance>` instead of `user:<id>`: each process sets the balance
 * of its cached user in place, in commit order, instead of dropping the user and reading the row
 * again on the next request. Any other change of the row still sends `user:<id>`.
 */
export class CreditsCacheUpdate1764600000500 implements MigrationInterface {
  name = 'CreditsCacheUpdate1764600000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION agentsite_cache_notify_user() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' AND NEW.credits IS DISTINCT FROM OLD.credits
           AND (to_jsonb(NEW) - 'credits' - 'updated_at') = (to_jsonb(OLD) - 'credits' - 'updated_at') THEN
          PERFORM pg_notify('agentsite_cache', 'credits:' || NEW.id::text || ':' || NEW.credits::text);
        ELSE
          PERFORM pg_notify('agentsite_cache', 'user:' || OLD.id::text);
        END IF;
        RETURN NULL;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(DROP_ONLY);
  }
}
