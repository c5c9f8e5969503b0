import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Cross-process invalidation of the cached site lists of a vault (VaultRepository.firstSites: the
 * sites /mcp resolves `<site>__<tool>` against on every tools/call and lists on tools/list): any
 * insert, update or delete of a `sites` row sends `sites:u:<user id>` for a personal site and
 * `sites:w:<workspace id>` for a workspace's, for the row before and after (a site moved into a
 * workspace leaves one list and joins another), on the `agentsite_cache` channel, as the triggers of
 * SiteCacheInvalidation1764600000400 send `site:<id>`. A credential's changes do not touch the lists.
 */
export class ScopeSitesCache1765000024000 implements MigrationInterface {
  name = 'ScopeSitesCache1765000024000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION agentsite_cache_notify_scope_sites() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          PERFORM pg_notify('agentsite_cache', 'sites:' || CASE WHEN OLD.workspace_id IS NULL
            THEN 'u:' || OLD.user_id::text ELSE 'w:' || OLD.workspace_id::text END);
        END IF;
        IF TG_OP <> 'DELETE' THEN
          PERFORM pg_notify('agentsite_cache', 'sites:' || CASE WHEN NEW.workspace_id IS NULL
            THEN 'u:' || NEW.user_id::text ELSE 'w:' || NEW.workspace_id::text END);
        END IF;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER sites_scope_cache_invalidation AFTER INSERT OR UPDATE OR DELETE ON sites
        FOR EACH ROW EXECUTE FUNCTION agentsite_cache_notify_scope_sites()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER sites_scope_cache_invalidation ON sites');
    await q.query('DROP FUNCTION agentsite_cache_notify_scope_sites()');
  }
}
