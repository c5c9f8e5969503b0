/**
 * `node dist/bench/growth.js`: the request paths' statements (and the run paths' that benchmark 11
 * counts and that read more than a row by its key) on two databases side by side in one
 * PostgreSQL of its own (`npm start`'s durability): one holding only the rows the statements use, the
 * other the same rows in a database grown as a service's grows (other users with their sites,
 * workspaces, agents, OAuth flows, chat sessions, webhook deliveries, credit holds and ledger rows, and
 * the agent's own ended runs), in alternating
 * rounds. Prints, per statement, the median time of a call on each and their ratio: a statement that
 * reaches its rows through an index costs about the same on both (`growth_ratio` near 1), one that
 * reads a table (or an agent's whole history) costs as much more as the table holds.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { fmt, line, percentile } from './stats.js';
import { queuedWebhookRow } from '../test/utils/runs.js';
import { startEmbeddedPostgres } from '../scripts/runtime/postgres.js';
import { freePort } from '../scripts/runtime/processes.js';
import { AgentsRepository } from '../src/agents/agents.repository.js';
import { ChatRepository } from '../src/chat/chat.repository.js';
import { CreditsRepository } from '../src/credits/credits.repository.js';
import { RUN_USAGE_CHARGE_PART } from '../src/runs/run-usage.repository.js';
import { BALANCE_CHARGE_PART } from '../src/users/users.repository.js';
import type { CacheInvalidationBus } from '../src/common/cache/invalidation-bus.js';
import { loadSettings } from '../src/config/settings.js';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { ENTITIES } from '../src/entities.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { UNSTARTED_RUN_AGE_MS } from '../src/runs/unstarted-runs.js';
import { UserEntity } from '../src/users/user.entity.js';
import { UsersRepository } from '../src/users/users.repository.js';
import { VaultRepository } from '../src/vault/vault.repository.js';
import { WEBHOOK_DELIVERIES_KEPT } from '../src/webhooks/webhook-deliveries.service.js';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository.js';
import type { Scope } from '../src/workspaces/scope.js';
import { WorkspacesRepository } from '../src/workspaces/workspaces.repository.js';

const CALLS_PER_ROUND = 150;
const ROUNDS = 4;
/** Other users in the grown database, each with a site, a workspace, an agent, an OAuth flow and a chat. */
const OTHERS = 20_000;
/** The measured agent's ended runs in the grown database. */
const HISTORY = 100_000;

const noCaches = { dropLocal: () => undefined } as unknown as CacheInvalidationBus;

/** The rows the statements use, the same in both databases. */
interface Seeded {
  userId: string;
  agentId: string;
  queuedRunId: string;
  sessionTokenHash: string;
  scope: Scope;
}

async function seed(db: DataSource): Promise<Seeded> {
  const [user] = await db.query(
    "INSERT INTO users (email, password_hash, credits) VALUES ('growth@example.test', 'x', 1000) RETURNING id",
  );
  const userId = user.id as string;
  // More users than the admin's page takes, so both databases answer a full page.
  await db.query(
    "INSERT INTO users (email, password_hash) SELECT 'seeded-' || g || '@example.test', 'x' FROM generate_series(1, 60) g",
  );
  const [site] = await db.query(
    "INSERT INTO sites (user_id, url, manifest, manifest_fetched_at) VALUES ($1, 'https://notes.example.test', '{}', now()) RETURNING id",
    [userId],
  );
  const [workspace] = await db.query("INSERT INTO workspaces (name, owner_id) VALUES ('growth', $1) RETURNING id", [
    userId,
  ]);
  await db.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [
    workspace.id,
    userId,
  ]);
  await db.query(
    'INSERT INTO agents (user_id, workspace_id, name, system_prompt, site_ids, trigger_type) ' +
      "SELECT $1, $2, 'team agent ' || g, 'p', '{}', 'webhook' FROM generate_series(1, 3) g",
    [userId, workspace.id],
  );
  const [agent] = await db.query(
    "INSERT INTO agents (user_id, name, system_prompt, site_ids, trigger_type) VALUES ($1, 'hooked', 'p', '{}', 'webhook') RETURNING id",
    [userId],
  );
  const [run] = await db.query(
    'INSERT INTO runs (id, agent_id, user_id, status, triggered_by, system_prompt_source, workflow_id) ' +
      "VALUES (gen_random_uuid(), $1, $2, 'queued', 'webhook', 'agent', 'agent-x') RETURNING id",
    [agent.id, userId],
  );
  const sessionTokenHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  const [session] = await db.query(
    'INSERT INTO chat_sessions (user_id, token_hash, sites, expires_at) ' +
      "VALUES ($1, $2, jsonb_build_array(jsonb_build_object('siteId', $3::text, 'tools', NULL)), now() + interval '1 day') RETURNING id",
    [userId, sessionTokenHash, site.id],
  );
  await db.query(
    'INSERT INTO chat_messages (session_id, role, content) ' +
      "SELECT $1, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, 'message ' || g FROM generate_series(1, 20) g",
    [session.id],
  );
  const owner = await db.getRepository(UserEntity).findOneByOrFail({ id: userId });
  return {
    userId,
    agentId: agent.id as string,
    queuedRunId: run.id as string,
    sessionTokenHash,
    scope: { user: owner, workspace: { id: workspace.id as string, role: 'owner', owner } },
  };
}

/** What a service's database holds besides: other users' rows, and the measured agent's history. */
async function grow(db: DataSource, seeded: Seeded): Promise<void> {
  await db.query(
    "INSERT INTO users (email, password_hash) SELECT 'other-' || g || '@example.test', 'x' FROM generate_series(1, $1) g",
    [OTHERS],
  );
  const others = "(SELECT id, row_number() OVER () AS n FROM users WHERE email LIKE 'other-%')";
  await db.query(
    `INSERT INTO sites (user_id, url, manifest, manifest_fetched_at) SELECT id, 'https://site-' || n || '.example.test', '{}', now() FROM ${others} o`,
  );
  await db.query(`INSERT INTO workspaces (name, owner_id) SELECT 'w' || n, id FROM ${others} o`);
  await db.query(
    'INSERT INTO agents (user_id, workspace_id, name, system_prompt, site_ids, trigger_type) ' +
      "SELECT w.owner_id, w.id, 'agent', 'p', '{}', 'webhook' FROM workspaces w WHERE w.name LIKE 'w%'",
  );
  await db.query(
    'INSERT INTO oauth_states (state_hash, user_id, site_id, key_id, iv, ciphertext, auth_tag, scopes, expires_at) ' +
      "SELECT md5(s.id::text), s.user_id, s.id, 'k', '\\x00', '\\x00', '\\x00', '[]', now() + interval '10 minutes' " +
      "FROM sites s WHERE s.url LIKE 'https://site-%'",
  );
  await db.query(
    'INSERT INTO chat_sessions (user_id, token_hash, sites, expires_at) ' +
      "SELECT s.user_id, md5(s.id::text), jsonb_build_array(jsonb_build_object('siteId', s.id::text, 'tools', NULL)), " +
      "now() + interval '1 day' FROM sites s WHERE s.url LIKE 'https://site-%'",
  );
  await db.query(
    'INSERT INTO chat_messages (session_id, role, content) ' +
      "SELECT cs.id, 'user', 'hello' FROM chat_sessions cs CROSS JOIN generate_series(1, 5) WHERE cs.user_id <> $1",
    [seeded.userId],
  );
  // Each other agent's kept webhook deliveries, a few hold of calls in flight and ledger rows a user.
  await db.query(
    'INSERT INTO webhook_deliveries (agent_id, status_code) ' +
      "SELECT a.id, 202 FROM agents a CROSS JOIN generate_series(1, 5) WHERE a.name = 'agent'",
  );
  await db.query(
    'INSERT INTO credit_holds (key, user_id, amount, expires_at) ' +
      "SELECT 'hold-' || u.id || '-' || g, u.id, 1, now() + interval '1 hour' FROM users u CROSS JOIN generate_series(1, 2) g " +
      "WHERE u.email LIKE 'other-%'",
  );
  await db.query(
    'INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) ' +
      "SELECT u.id, -1, 'model_turn', 'turn-' || u.id || '-' || g, 0 FROM users u CROSS JOIN generate_series(1, 5) g " +
      "WHERE u.email LIKE 'other-%'",
  );
  await db.query(
    'INSERT INTO runs (id, agent_id, user_id, status, triggered_by, system_prompt_source, workflow_id, queued_at, ended_at) ' +
      "SELECT gen_random_uuid(), $1, $2, 'completed', 'webhook', 'agent', 'agent-x', now() - make_interval(secs => g), " +
      'now() - make_interval(secs => g) FROM generate_series(1, $3) g',
    [seeded.agentId, seeded.userId, HISTORY],
  );
  await db.query('ANALYZE');
}

/** One statement: `prepare` (untimed) makes what the call needs, `call` is timed, `after` (untimed) tidies. */
interface Statement {
  prepare?: () => Promise<unknown>;
  call: (prepared: unknown) => Promise<unknown>;
  after?: (prepared: unknown) => Promise<unknown>;
}

function statementsOf(db: DataSource, seeded: Seeded): Record<string, Statement> {
  const runs = new RunsRepository(db);
  const agents = new AgentsRepository(db);
  const chat = new ChatRepository(db);
  const workspaces = new WorkspacesRepository(db);
  const users = new UsersRepository(db.getRepository(UserEntity), noCaches);
  const vault = new VaultRepository(db, noCaches);
  const webhooks = new WebhooksRepository(db);
  const credits = new CreditsRepository(db);
  const queuedRun = runs.create({ id: seeded.queuedRunId, agentId: seeded.agentId, queuedAt: new Date() });
  return {
    'chat turn read (every chat turn)': {
      call: () => chat.turnRows({ column: 'token_hash', value: seeded.sessionTokenHash }, seeded.userId),
    },
    'webhook intake: the run and its queue position (every delivery)': {
      call: () => runs.insertQueued(queuedWebhookRow(runs, seeded), true),
      after: async () => {
        await db.query("DELETE FROM runs WHERE agent_id = $1 AND status = 'queued' AND id <> $2", [
          seeded.agentId,
          seeded.queuedRunId,
        ]);
      },
    },
    "a repeated delivery's queue position": { call: () => runs.countAhead(queuedRun) },
    'whether the agent has a run open (retries)': { call: () => runs.hasOpenRun(seeded.agentId) },
    'webhook target (control: by primary key)': { call: () => agents.webhookTarget(seeded.agentId) },
    "a workspace's agents, one page": { call: () => agents.page(seeded.scope, { limit: 20 }) },
    'the workspaces a user owns (creating one)': { call: () => workspaces.countOwned(db.manager, seeded.userId) },
    "the admin's first page of users": { call: () => users.page({ limit: 50 }) },
    // The run paths' (benchmark 11): what reads more than one row by its key.
    'a manual or scheduled run: rows left unstarted (every such run)': {
      call: () => runs.findUnstarted(new Date(Date.now() - UNSTARTED_RUN_AGE_MS), 10, seeded.agentId),
    },
    "a webhook delivery's record, keeping the agent's newest (every delivery)": {
      call: () =>
        webhooks.record(
          {
            agentId: seeded.agentId,
            statusCode: 202,
            code: null,
            fields: [],
            requestId: null,
            runId: null,
            duplicate: false,
          },
          WEBHOOK_DELIVERIES_KEPT,
        ),
    },
    "a model call's credit hold, the balance's lock with it (every model turn)": {
      call: async () => {
        const key = `growth-${randomUUID()}`;
        await credits.hold({ userId: seeded.userId, key, amount: 1, ttlMs: 60_000 });
        return key;
      },
      after: (key) => credits.release(seeded.userId, key as string),
    },
    "a model call's charge: the balance's lock, then the charge found by its reference or written, one message (every model turn)":
      {
        call: () =>
          credits.charge(
            { userId: seeded.userId, amount: 1, reason: 'model_turn', reference: `growth-${randomUUID()}`, run: null },
            { balance: BALANCE_CHARGE_PART, runUsage: RUN_USAGE_CHARGE_PART },
          ),
      },
    'a site deleted with its OAuth flows': {
      prepare: async () => {
        const [site] = await db.query(
          "INSERT INTO sites (user_id, url, manifest, manifest_fetched_at) VALUES ($1, $2, '{}', now()) RETURNING id",
          [seeded.userId, `https://doomed-${randomUUID()}.example.test`],
        );
        await db.query(
          'INSERT INTO oauth_states (state_hash, user_id, site_id, key_id, iv, ciphertext, auth_tag, scopes, expires_at) ' +
            "VALUES ($1, $2, $3, 'k', '\\x00', '\\x00', '\\x00', '[]', now() + interval '10 minutes')",
          [randomUUID(), seeded.userId, site.id],
        );
        return site.id as string;
      },
      call: (siteId) => vault.delete({ id: siteId as string, userId: seeded.userId, workspaceId: null }),
    },
  };
}

async function main(): Promise<void> {
  Logger.overrideLogger(false);
  const dir = mkdtempSync(path.join(tmpdir(), 'agentsite-bench-growth-'));
  const postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port: await freePort() });
  const opened: DataSource[] = [];
  try {
    const settings = loadSettings({
      DATA_DIR: dir,
      JWT_SECRET: 'x'.repeat(40),
      VAULT_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    const open = async (url: string): Promise<DataSource> => {
      const db = await openDataSource({ ...settings, databaseUrl: url, databasePoolMax: 2 }, ENTITIES);
      opened.push(db);
      await runMigrations(db);
      return db;
    };
    const small = await open(postgres.url);
    await small.query('CREATE DATABASE agentsite_grown');
    const grown = await open(postgres.url.replace('/agentsite', '/agentsite_grown'));
    const seededSmall = await seed(small);
    const seededGrown = await seed(grown);
    const started = performance.now();
    await grow(grown, seededGrown);
    const rows: Array<{ runs: number; sites: number }> = await grown.query(
      'SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM sites)::int AS sites',
    );
    console.log(
      `growth: the grown database holds ${rows[0]!.sites} sites and ${rows[0]!.runs} runs (filled in ${Math.round(
        (performance.now() - started) / 1000,
      )} s); median time of a call, ${ROUNDS} alternating rounds of ${CALLS_PER_ROUND} on each`,
    );
    const sides = {
      small: statementsOf(small, seededSmall),
      grown: statementsOf(grown, seededGrown),
    };
    for (const name of Object.keys(sides.small)) {
      const times = { small: [] as number[], grown: [] as number[] };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const side of round % 2 === 0 ? (['small', 'grown'] as const) : (['grown', 'small'] as const)) {
          const statement = sides[side][name]!;
          for (let i = 0; i < CALLS_PER_ROUND; i += 1) {
            const prepared = await statement.prepare?.();
            const before = performance.now();
            await statement.call(prepared);
            times[side].push(performance.now() - before);
            await statement.after?.(prepared);
          }
        }
      }
      const smallMs = percentile(times.small, 50);
      const grownMs = percentile(times.grown, 50);
      line(name, { small: fmt(smallMs), grown: fmt(grownMs), growth_ratio: (grownMs / smallMs).toFixed(2) });
    }
  } finally {
    for (const db of opened) {
      await db.destroy();
    }
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
