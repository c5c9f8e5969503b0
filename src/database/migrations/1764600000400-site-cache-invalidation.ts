import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Cross-process invalidation of the vault's cached sites (VaultRepository: a site with its
 * credential, read by every direct tool call): a change of a `sites` row, and any write of its
 * `site_credentials` row (a new token, an OAuth refresh, a lease, a deletion), sends `site:<site id>`
 * on the `agentsite_cache` channel, as the triggers of CacheInvalidation1764600000000 do for users.
 * Cascaded deletes (a user or a workspace removed) fire them too.
 */
export class SiteCacheInvalidation1764600000400 implements MigrationInterface {
  name = 'SiteCacheInvalidation1764600000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION agentsite_cache_notify_site() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('agentsite_cache', 'site:' || OLD.id::text);
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER sites_cache_invalidation AFTER UPDATE OR DELETE ON sites
        FOR EACH ROW EXECUTE FUNCTION agentsite_cache_notify_site()`);
    await q.query(`
      CREATE FUNCTION agentsite_cache_notify_site_credential() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          PERFORM pg_notify('agentsite_cache', 'site:' || OLD.site_id::text);
        END IF;
        IF TG_OP <> 'DELETE' THEN
          PERFORM pg_notify('agentsite_cache', 'site:' || NEW.site_id::text);
        END IF;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER site_credentials_cache_invalidation AFTER INSERT OR UPDATE OR DELETE ON site_credentials
        FOR EACH ROW EXECUTE FUNCTION agentsite_cache_notify_site_credential()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER site_credentials_cache_invalidation ON site_credentials');
    await q.query('DROP FUNCTION agentsite_cache_notify_site_credential()');
    await q.query('DROP TRIGGER sites_cache_invalidation ON sites');
    await q.query('DROP FUNCTION agentsite_cache_notify_site()');
  }
}
