import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Building an index on a large table can take longer than a query may (DB_QUERY_TIMEOUT_MS): these
 * statements get the time they need.
 */
const INDEX_BUILD_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/** Each index: its name, and what it is built on. */
const INDEXES: Array<{ name: string; on: string }> = [
  // The runs ahead of a new run (a webhook delivery's queue position, counted in the insert, and the
  // check for an unended run of an agent): only queued and active runs, so the count no longer reads
  // every run the agent ever had. A run enters it when queued and leaves it when it ends.
  { name: 'runs_agent_open', on: `runs (agent_id, queued_at, id) WHERE status IN ('queued', 'active')` },
  // A workspace's agents, a page at a time (GET /api/agents with X-Workspace-Id), and their count
  // when one is created (the tier's limit).
  { name: 'agents_workspace_created', on: 'agents (workspace_id, created_at, id) WHERE workspace_id IS NOT NULL' },
  // The workspaces a user owns, counted when they create one (the tier's limit).
  { name: 'workspaces_owner', on: 'workspaces (owner_id)' },
  // The admin's page of users, oldest first.
  { name: 'users_created', on: 'users (created_at, id)' },
  // A site's OAuth flows in progress, deleted with the site (the foreign key's cascade).
  { name: 'oauth_states_site', on: 'oauth_states (site_id)' },
];

/**
 * Indexes for statements that read whole tables (or all of an agent's runs) as the data grows, found
 * by running the e2e suites with sequential scans priced out and every plan logged
 * (`test/e2e/query-plans.e2e-spec.ts` keeps them so). Built CONCURRENTLY, so an existing database
 * keeps taking writes while they build; that cannot run in a transaction, hence `transaction = false`.
 * A build that was interrupted leaves an invalid index behind: it is dropped and built again.
 */
export class RequestPathIndexes1764700000000 implements MigrationInterface {
  name = 'RequestPathIndexes1764700000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const { name, on } of INDEXES) {
      const invalid: unknown[] = await q.query(
        'SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid',
        [name],
      );
      if (invalid.length > 0) {
        await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      }
      await q.query({
        text: `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${on}`,
        query_timeout: INDEX_BUILD_TIMEOUT_MS,
      } as unknown as string);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { name } of [...INDEXES].reverse()) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    }
  }
}
