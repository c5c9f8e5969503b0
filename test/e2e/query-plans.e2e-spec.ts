import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import type { CacheInvalidationBus } from '../../src/common/cache/invalidation-bus.js';
import { loadSettings, type Settings } from '../../src/config/settings.js';
import { dataSourceOptions, openDataSource, runMigrations } from '../../src/database/data-source.js';
import { RequestPathIndexes1764700000000 } from '../../src/database/migrations/1764700000000-request-path-indexes.js';
import { ENTITIES } from '../../src/entities.js';
import { RunReconcileRepository } from '../../src/runs/run-reconcile.repository.js';
import { RunsRepository } from '../../src/runs/runs.repository.js';
import { UserEntity } from '../../src/users/user.entity.js';
import { UsersRepository } from '../../src/users/users.repository.js';
import { VaultRepository } from '../../src/vault/vault.repository.js';
import type { Scope } from '../../src/workspaces/scope.js';
import { WorkspacesRepository } from '../../src/workspaces/workspaces.repository.js';
import { testEnv } from '../setup/shared-runtime.js';
import { queuedWebhookRow } from '../utils/runs.js';

/** A node of a JSON plan, with the fields these tests read (EXPLAIN ANALYZE's counts). */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** The rows a plan's scans of `table` went through: those they returned and those they filtered out. */
function rowsRead(plans: PlanNode[], table: string): number {
  const scans = plans
    .flatMap(planNodes)
    .filter((n) => n['Relation Name'] === table && n['Node Type'] !== 'ModifyTable');
  expect(scans.length).toBeGreaterThan(0);
  return scans.reduce(
    (sum, n) =>
      sum +
      (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) +
      (n['Rows Removed by Filter'] ?? 0) +
      (n['Rows Removed by Index Recheck'] ?? 0),
    0,
  );
}

/** A run reconciler's batch and the plans of its statement. */
type Candidates = { result: Awaited<ReturnType<RunReconcileRepository['candidates']>>; plans: PlanNode[] };

/** Rows the tables hold besides each test's own: a scan of the whole table reads at least these. */
const OTHERS = 40;

const noCaches = { dropLocal: () => undefined } as unknown as CacheInvalidationBus;

/**
 * The statements of request paths reach their rows through an index, not by reading a table (or all
 * of an agent's runs) that grows with the service's data. PostgreSQL's auto_explain, loaded into the
 * one connection of this test's pool, hands back the plan of every statement the repositories send
 * (nested ones too: a foreign key's cascade), with EXPLAIN ANALYZE's row counts, and sequential scans
 * priced out, so that the planner picks one only where no index can answer. Each table holds OTHERS
 * rows that are not the test's: reading them all is what each test rules out.
 */
describe('query plans of request paths', () => {
  let settings: Settings;
  let setup: DataSource;
  let explained: DataSource;
  const plans: PlanNode[] = [];
  let users: string[];

  /** The plans of the statements `work` sends (through the explained pool). */
  async function plansOf<T>(work: () => Promise<T>): Promise<{ result: T; plans: PlanNode[] }> {
    plans.length = 0;
    const result = await work();
    return { result, plans: [...plans] };
  }

  async function newUsers(n: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await setup.query(
      `INSERT INTO users (email, password_hash) SELECT 'plans-' || $1 || '-' || g || '@example.test', 'x' ` +
        'FROM generate_series(1, $2) g RETURNING id',
      [randomUUID(), n],
    );
    return rows.map((r) => r.id);
  }

  async function newAgents(userId: string, workspaceId: string | null, n: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await setup.query(
      'INSERT INTO agents (user_id, workspace_id, name, system_prompt, site_ids, trigger_type) ' +
        "SELECT $1, $2, 'agent ' || g, 'p', '{}', 'webhook' FROM generate_series(1, $3) g RETURNING id",
      [userId, workspaceId, n],
    );
    return rows.map((r) => r.id);
  }

  async function newWorkspace(ownerId: string): Promise<string> {
    const rows: Array<{ id: string }> = await setup.query(
      "INSERT INTO workspaces (name, owner_id) VALUES ('plans', $1) RETURNING id",
      [ownerId],
    );
    return rows[0]!.id;
  }

  beforeAll(async () => {
    settings = {
      ...loadSettings({ JWT_SECRET: 'x'.repeat(40), VAULT_KEY: Buffer.alloc(32, 7).toString('base64') }),
      databaseUrl: testEnv('databaseUrl'),
      databasePoolMax: 2,
    };
    setup = await openDataSource(settings, ENTITIES);
    await runMigrations(setup);
    users = await newUsers(OTHERS);
    const base = dataSourceOptions(settings, ENTITIES);
    explained = new DataSource({
      ...base,
      // TypeORM would log each notice, and so each plan: these are read below instead.
      logger: 'advanced-console',
      logging: false,
      extra: {
        ...(base.extra as Record<string, unknown>),
        max: 1,
        options:
          '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 ' +
          '-c auto_explain.log_analyze=on -c auto_explain.log_format=json -c auto_explain.log_level=notice ' +
          '-c auto_explain.log_nested_statements=on -c enable_seqscan=off',
      },
    } as typeof base);
    await explained.initialize();
    // The pool's one connection: every statement below goes through it, and its notices are the plans.
    const pool = (explained.driver as unknown as { master: pg.Pool }).master;
    const client = await pool.connect();
    client.on('notice', (notice) => {
      const text = notice.message ?? '';
      if (text.includes('plan:')) {
        plans.push((JSON.parse(text.slice(text.indexOf('{'))) as { Plan: PlanNode }).Plan);
      }
    });
    client.release();
  });

  afterAll(async () => {
    await explained?.destroy();
    await setup?.destroy();
  });

  it("a new run's queue position reads the agent's open runs, not every run it ever had", async () => {
    const [agentId] = await newAgents(users[0]!, null, 1);
    // The agent's history: many ended runs, and two still queued.
    await setup.query(
      'INSERT INTO runs (id, agent_id, user_id, status, triggered_by, system_prompt_source, workflow_id, queued_at) ' +
        "SELECT gen_random_uuid(), $1, $2, CASE WHEN g > $3 THEN 'queued' ELSE 'completed' END, 'webhook', 'agent', " +
        "'agent-x', now() - make_interval(secs => 1000 - g) FROM generate_series(1, $3 + 2) g",
      [agentId, users[0], OTHERS],
    );
    const runs = new RunsRepository(explained);
    const row = queuedWebhookRow(runs, { agentId, userId: users[0]! });
    const inserted = await plansOf(() => runs.insertQueued(row, true));
    expect(inserted.result).toEqual({ inserted: true, ahead: 2 });
    expect(rowsRead(inserted.plans, 'runs')).toBeLessThan(10);

    const counted = await plansOf(() => runs.countAhead(row));
    expect(counted.result).toBe(2);
    expect(rowsRead(counted.plans, 'runs')).toBeLessThan(10);

    const open = await plansOf(() => runs.hasOpenRun(agentId!));
    expect(open.result).toBe(true);
    expect(rowsRead(open.plans, 'runs')).toBeLessThan(10);

    // The repair of starts that never reached Temporal: on every manual start (the agent's), and in a
    // sweep (every agent's): both read the open runs only.
    const unstarted = await plansOf(() => runs.findUnstarted(new Date(), 10, agentId!));
    expect(unstarted.result).toEqual([]);
    expect(rowsRead(unstarted.plans, 'runs')).toBeLessThan(10);
    // Every agent's: the suites sharing this database may have queued rows of their own just now, so
    // the bound is the open rows the table holds around the sweep, not a constant: the sweep reads
    // those, and none of the ended runs (this agent's OTHERS among them).
    const openRows = async (): Promise<number> =>
      Number((await setup.query("SELECT count(*)::int AS n FROM runs WHERE status = 'queued'"))[0].n);
    const openBefore = await openRows();
    const swept = await plansOf(() => runs.findUnstarted(new Date(), 10));
    const openAfter = await openRows();
    expect(swept.result.filter((r) => r.agentId === agentId)).toEqual([]);
    expect(rowsRead(swept.plans, 'runs')).toBeLessThanOrEqual(Math.max(openBefore, openAfter) + 2);
  });

  it("a workspace's agents, a page and their count, read that workspace's agents only", async () => {
    const [owner] = await newUsers(1);
    await newAgents(users[1]!, null, OTHERS);
    const workspaceId = await newWorkspace(owner!);
    const mine = await newAgents(owner!, workspaceId, 3);
    const user = (await setup.getRepository(UserEntity).findOneByOrFail({ id: owner! })) as UserEntity;
    const scope: Scope = { user, workspace: { id: workspaceId, role: 'owner', owner: user } };
    const agents = new AgentsRepository(explained);

    const page = await plansOf(() => agents.page(scope, { limit: 2 }));
    expect(page.result.map((a) => a.id).sort()).toEqual([...mine].sort());
    expect(rowsRead(page.plans, 'agents')).toBeLessThan(10);

    const count = await plansOf(() => agents.createLocked(owner!, scope, (tx) => tx.count()));
    expect(count.result).toBe(3);
    expect(rowsRead(count.plans, 'agents')).toBeLessThan(10);
  });

  it('the workspaces a user owns are counted without reading every workspace', async () => {
    for (const other of users.slice(0, OTHERS)) {
      await newWorkspace(other);
    }
    const [owner] = await newUsers(1);
    await newWorkspace(owner!);
    const workspaces = new WorkspacesRepository(explained);
    const counted = await plansOf(() => workspaces.countOwned(explained.manager, owner!));
    expect(counted.result).toBe(1);
    expect(rowsRead(counted.plans, 'workspaces')).toBeLessThan(5);
  });

  it("the admin's page of users reads the page, not every user", async () => {
    const repository = new UsersRepository(explained.getRepository(UserEntity), noCaches);
    const page = await plansOf(() => repository.page({ limit: 5 }));
    expect(page.result).toHaveLength(6);
    const createdAt = page.result.map((u) => u.createdAt.getTime());
    expect(createdAt).toEqual([...createdAt].sort((a, b) => a - b));
    expect(rowsRead(page.plans, 'users')).toBeLessThan(10);
  });

  it('the migration builds an index again when an earlier build was interrupted (left invalid)', async () => {
    const [agentId] = await newAgents(users[4]!, null, 1);
    await setup.query(
      'INSERT INTO runs (id, agent_id, user_id, status, triggered_by, system_prompt_source, workflow_id) ' +
        "SELECT gen_random_uuid(), $1, $2, 'queued', 'webhook', 'agent', 'same' FROM generate_series(1, 2)",
      [agentId, users[4]],
    );
    const valid = async (): Promise<boolean[]> =>
      (
        await setup.query(
          "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'runs_agent_open'",
        )
      ).map((r: { indisvalid: boolean }) => r.indisvalid);
    expect(await valid()).toEqual([true]);
    // A concurrent build that fails (here on duplicates) leaves its index behind, marked invalid.
    await setup.query('DROP INDEX CONCURRENTLY runs_agent_open');
    await expect(setup.query('CREATE UNIQUE INDEX CONCURRENTLY runs_agent_open ON runs (workflow_id)')).rejects.toThrow(
      /could not create unique index/,
    );
    expect(await valid()).toEqual([false]);
    const runner = setup.createQueryRunner();
    try {
      await new RequestPathIndexes1764700000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await valid()).toEqual([true]);
    const definition: Array<{ indexdef: string }> = await setup.query(
      "SELECT indexdef FROM pg_indexes WHERE indexname = 'runs_agent_open'",
    );
    expect(definition[0]!.indexdef).toMatch(/\(agent_id, queued_at, id\) WHERE \(status = ANY/);
  });

  it("deleting a site removes its OAuth flows in progress without reading everyone's", async () => {
    const site = async (userId: string): Promise<string> => {
      const rows: Array<{ id: string }> = await setup.query(
        "INSERT INTO sites (user_id, url, manifest, manifest_fetched_at) VALUES ($1, $2, '{}', now()) RETURNING id",
        [userId, `https://plans-${randomUUID()}.example.test`],
      );
      return rows[0]!.id;
    };
    const state = (userId: string, siteId: string): Promise<unknown> =>
      setup.query(
        'INSERT INTO oauth_states (state_hash, user_id, site_id, key_id, iv, ciphertext, auth_tag, scopes, expires_at) ' +
          "VALUES ($1, $2, $3, 'k', '\\x00', '\\x00', '\\x00', '[]', now() + interval '10 minutes')",
        [randomUUID(), userId, siteId],
      );
    const others = await site(users[2]!);
    for (let i = 0; i < OTHERS; i += 1) {
      await state(users[2]!, others);
    }
    const doomed = await site(users[3]!);
    await state(users[3]!, doomed);
    const vault = new VaultRepository(explained, noCaches);
    const deleted = await plansOf(() => vault.delete({ id: doomed, userId: users[3]!, workspaceId: null }));
    expect(deleted.result).toBeUndefined();
    expect(await setup.query('SELECT 1 FROM oauth_states WHERE site_id = $1', [doomed])).toEqual([]);
    expect(await setup.query('SELECT 1 FROM oauth_states WHERE site_id = $1', [others])).toHaveLength(OTHERS);
    expect(rowsRead(deleted.plans, 'oauth_states')).toBeLessThan(5);
  });

  it("the run reconciler's batch reads the runs not yet archived, not every run that ever ended", async () => {
    const [agentId] = await newAgents(users[5]!, null, 1);
    const insert = (status: string, n: number, archived: boolean, minutesAgo: number): Promise<Array<{ id: string }>> =>
      setup.query(
        'INSERT INTO runs (id, agent_id, user_id, status, triggered_by, system_prompt_source, workflow_id, ' +
          'temporal_run_id, queued_at, archived_at) ' +
          "SELECT gen_random_uuid(), $1, $2, $3, 'webhook', 'agent', 'agent-x', gen_random_uuid()::text, " +
          'now() - make_interval(mins => $5), CASE WHEN $4 THEN now() END FROM generate_series(1, $6) RETURNING id',
        [agentId, users[5], status, archived, minutesAgo, n],
      );
    // Many archived runs (what the table mostly holds), two left active long ago, one just queued.
    await insert('completed', 5 * OTHERS, true, 60);
    const stuck = (await insert('active', 2, false, 60)).map((r) => r.id);
    const fresh = await insert('active', 1, false, 0);
    const reconcile = new RunReconcileRepository(explained);

    // The suites sharing this database leave runs of their own not yet archived (runs are archived at
    // their queue's hand-over, which a stopped test stack never reaches), so the bound is the rows the
    // index holds around the batch, not a constant: a batch reads those and none of the archived runs
    // (this test's 5 × OTHERS among them), which a read of the whole table would.
    const unreconciled = async (): Promise<number> =>
      Number(
        (
          await setup.query(
            'SELECT count(*)::int AS n FROM runs WHERE archived_at IS NULL ' +
              "AND (status IN ('queued', 'active') OR temporal_run_id IS NOT NULL) " +
              "AND queued_at < now() - interval '300 seconds'",
          )
        )[0].n,
      );
    const bound = async (read: () => Promise<number>): Promise<number> => {
      const before = await unreconciled();
      const rows = await read();
      return rows - Math.max(before, await unreconciled());
    };
    let first!: Candidates;
    expect(
      await bound(async () => {
        first = await plansOf(() => reconcile.candidates(null, 300, 1000));
        return rowsRead(first.plans, 'runs');
      }),
    ).toBeLessThanOrEqual(2);
    const ids = first.result.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(stuck));
    expect(ids).not.toContain(fresh[0]!.id);

    const sorted = first.result.filter((r) => stuck.includes(r.id));
    const after = { queuedAt: sorted[0]!.queuedAt.toISOString(), id: sorted[0]!.id };
    let next!: Candidates;
    expect(
      await bound(async () => {
        next = await plansOf(() => reconcile.candidates(after, 300, 1000));
        return rowsRead(next.plans, 'runs');
      }),
    ).toBeLessThanOrEqual(2);
    expect(next.result.map((r) => r.id)).toContain(sorted[1]!.id);
    expect(next.result.map((r) => r.id)).not.toContain(sorted[0]!.id);
  });
});
