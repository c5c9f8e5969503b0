/**
 * `node dist/bench/statements.js`: the hot statements of a run's path (webhook intake, a run's start,
 * its tool call's site, the model turn's check and charge, its end and archive) and a chat turn's
 * save, each sent as a named prepared
 * statement (what the service sends) and as an unnamed one (parsed and planned on every call), in
 * alternating rounds on one PostgreSQL of its own (`npm start`'s durability). Prints, per statement,
 * the median wall time and PostgreSQL CPU per call on each side and their ratio. The ids are random:
 * every statement finds nothing and writes nothing (the charge's ledger row and the save are
 * refused), so both sides do the same work but the planning.
 *
 * Then a model call's credit rules as the service runs them for a user who has the credits (the
 * hold before the call, the charge after it, each under the balance's row lock): the round trips to
 * PostgreSQL each makes (each one message, see CreditsRepository.hold and charge) and their median
 * wall time; then each side by side with the same rule as a transaction of several round trips.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { fmt, line, percentile } from './stats.js';
import { clockTicks, postmasterPid, treeCpu } from './scale.js';
import { startEmbeddedPostgres } from '../scripts/runtime/postgres.js';
import { freePort } from '../scripts/runtime/processes.js';
import { AgentsRepository } from '../src/agents/agents.repository.js';
import { ChatRepository } from '../src/chat/chat.repository.js';
import type { CacheInvalidationBus } from '../src/common/cache/invalidation-bus.js';
import { preparedStatement } from '../src/common/database/prepared-statement.js';
import { CreditHooks } from '../src/credits/credit-hooks.js';
import { CreditsRepository } from '../src/credits/credits.repository.js';
import { CreditsService } from '../src/credits/credits.service.js';
import { loadSettings } from '../src/config/settings.js';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { ENTITIES } from '../src/entities.js';
import { ModelRepository } from '../src/model/model.repository.js';
import { RunExecutionRepository } from '../src/runs/run-execution.repository.js';
import { RUN_USAGE_CHARGE_PART } from '../src/runs/run-usage.repository.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { UserEntity } from '../src/users/user.entity.js';
import { balanceRowsOf } from '../src/users/users.module.js';
import { UsersRepository } from '../src/users/users.repository.js';

const CALLS_PER_ROUND = 1500;
const ROUNDS = 3;

/** Sends every statement the repositories name as it is, or (`named` false) as its bare text. */
function switchable(dataSource: DataSource): { set(named: boolean): void } {
  const query = dataSource.query.bind(dataSource);
  let named = true;
  // The query runner too: a transaction's statements (EntityManager.query) pass theirs.
  dataSource.query = ((statement: unknown, parameters?: unknown[], runner?: QueryRunner) =>
    query(
      !named && typeof statement === 'object' && statement !== null
        ? (statement as { text: string }).text
        : (statement as string),
      parameters,
      runner,
    )) as DataSource['query'];
  return { set: (value) => void (named = value) };
}

/** What the two statements that find nothing to write answer: PostgreSQL's refusal, expected. */
const refused = (err: { code?: string }): void => {
  if (err.code !== '23503') {
    throw err;
  }
};

const median = (values: number[]): number => percentile(values, 50);

async function main(): Promise<void> {
  // The migrations' lines, and an error line for each refusal below (DatabaseLogger): this bench
  // prints only its figures.
  Logger.overrideLogger(false);
  const dir = mkdtempSync(path.join(tmpdir(), 'agentsite-bench-statements-'));
  const postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port: await freePort() });
  const postmaster = postmasterPid(path.join(dir, 'postgres'));
  const postgresCpu = (ticks: number): number => treeCpu(postmaster, ticks);
  let dataSource: DataSource | undefined;
  try {
    const settings = {
      ...loadSettings({ DATA_DIR: dir, JWT_SECRET: 'x'.repeat(40), VAULT_KEY: Buffer.alloc(32, 7).toString('base64') }),
      databaseUrl: postgres.url,
      databasePoolMax: 2,
    };
    dataSource = await openDataSource(settings, ENTITIES);
    await runMigrations(dataSource);
    const mode = switchable(dataSource);
    const runs = new RunsRepository(dataSource);
    const execution = new RunExecutionRepository(dataSource);
    const agents = new AgentsRepository(dataSource);
    const model = new ModelRepository(dataSource);
    const users = new UsersRepository(dataSource.getRepository(UserEntity), {
      dropLocal: () => undefined,
    } as unknown as CacheInvalidationBus);
    const chat = new ChatRepository(dataSource);
    const statements: Record<string, () => Promise<unknown>> = {
      'agents_webhook_target (webhook intake)': () => agents.webhookTarget(randomUUID()),
      'runs_start (first model turn)': () =>
        execution.start(
          { agentId: randomUUID(), runId: randomUUID(), userId: randomUUID() },
          { workflowId: `agent-${randomUUID()}`, runId: randomUUID() },
        ),
      'runs_tool_site (tool call)': () =>
        execution.siteForToolCall({ siteId: randomUUID(), runId: randomUUID(), userId: randomUUID() }),
      'model_active_run_turn (next turns)': () => model.activeRunTurn(randomUUID(), randomUUID()),
      'runs_finish (run end)': () =>
        execution.finish(
          {
            runId: randomUUID(),
            status: 'completed',
            output: '',
            agentId: randomUUID(),
            userId: randomUUID(),
          },
          { workflowId: `agent-${randomUUID()}`, runId: randomUUID() },
        ),
      'runs_by_id (archive)': () => runs.findById(randomUUID()),
      'runs_save_archive (archive)': () =>
        runs.saveArchive({ runId: randomUUID(), workflowId: 'agent-x', temporalRunId: randomUUID(), timeline: [] }),
      // This one refuses ids that match nothing (no such session: a foreign key), on both sides alike.
      'chat_save_turn (chat turn end)': () =>
        chat
          .saveTurn({
            sessionId: randomUUID(),
            content: 'hello',
            reply: {
              id: randomUUID(),
              content: 'hi',
              toolCalls: [],
              modelMessages: [],
              parts: [{ type: 'text', text: 'hi' }],
              usage: null,
              cut: false,
            },
          })
          .catch(refused),
    };
    const ticks = clockTicks();
    let namedSum = 0;
    let unnamedSum = 0;
    for (const [name, call] of Object.entries(statements)) {
      const wall = { named: [] as number[], unnamed: [] as number[] };
      const cpu = { named: [] as number[], unnamed: [] as number[] };
      for (let i = 0; i < 200; i += 1) {
        mode.set(i % 2 === 0);
        await call(); // warm-up: both sides' connections, and the prepared statements
      }
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const side of ['named', 'unnamed'] as const) {
          mode.set(side === 'named');
          const cpuBefore = postgresCpu(ticks);
          const started = performance.now();
          for (let i = 0; i < CALLS_PER_ROUND; i += 1) {
            await call();
          }
          wall[side].push((performance.now() - started) / CALLS_PER_ROUND);
          cpu[side].push((postgresCpu(ticks) - cpuBefore) / CALLS_PER_ROUND);
        }
      }
      namedSum += median(wall.named);
      unnamedSum += median(wall.unnamed);
      line(name, {
        prepared_wall: fmt(median(wall.named)),
        unnamed_wall: fmt(median(wall.unnamed)),
        ratio: (median(wall.named) / median(wall.unnamed)).toFixed(2),
        prepared_postgres_cpu: fmt(median(cpu.named)),
        unnamed_postgres_cpu: fmt(median(cpu.unnamed)),
      });
    }
    line(`all ${Object.keys(statements).length}, one of each`, {
      prepared_wall: fmt(namedSum),
      unnamed_wall: fmt(unnamedSum),
      ratio: (namedSum / unnamedSum).toFixed(2),
    });
    mode.set(true);
    await creditRules(dataSource, users, () => postgresCpu(ticks));
  } finally {
    await dataSource?.destroy();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A model call's credit rules for a user who has the credits, as CreditsService runs them: the hold
 * (the balance's lock and the hold, one message) and the charge (the balance's lock and the charge,
 * one message; a run's turn adds the run's usage in it). Counts the round trips each makes.
 */
async function creditRules(dataSource: DataSource, users: UsersRepository, postgresCpu: () => number): Promise<void> {
  const hooks = new CreditHooks();
  hooks.registerBalances(balanceRowsOf(users));
  hooks.registerRunUsage(RUN_USAGE_CHARGE_PART);
  const credits = new CreditsService(new CreditsRepository(dataSource), hooks);
  const [{ id: userId }]: Array<{ id: string }> = await dataSource.query(
    "INSERT INTO users (email, password_hash, credits) VALUES ($1, 'x', $2) RETURNING id",
    [`bench-${randomUUID()}@example.com`, 1_000_000_000],
  );
  // Every message to PostgreSQL, a transaction's BEGIN and COMMIT included and the pool's own
  // queries too, goes through a pg client's query.
  const clients = pg.Client.prototype as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const query = clients.query;
  let sent = 0;
  clients.query = function (this: unknown, ...args: unknown[]) {
    sent += 1;
    return query.apply(this, args);
  };
  const statements = async (work: () => Promise<unknown>): Promise<number> => {
    const before = sent;
    await work();
    return sent - before;
  };
  const call = async (): Promise<{ hold: number; charge: number }> => {
    const key = `chat:${randomUUID()}:1`;
    const hold = await statements(() => credits.reserve(userId, key, 1));
    const charge = await statements(() => credits.charge(userId, 1, 'chat_turn', key));
    return { hold, charge };
  };
  for (let i = 0; i < 200; i += 1) {
    await call();
  }
  const wall: number[] = [];
  let counted = { hold: 0, charge: 0 };
  for (let i = 0; i < CALLS_PER_ROUND; i += 1) {
    const started = performance.now();
    counted = await call();
    wall.push(performance.now() - started);
  }
  line("a model call's credit rules (hold + charge, a user with credits)", {
    hold_round_trips: counted.hold,
    charge_round_trips: counted.charge,
    wall: fmt(median(wall)),
  });
  await holdSideBySide(dataSource, credits, userId, postgresCpu);
  await chargeSideBySide(dataSource, credits, users, userId, postgresCpu);
}

/**
 * The hold as a transaction of four round trips (BEGIN, the balance's lock, the hold as a prepared
 * statement taking the balance, COMMIT): how CreditsService sent it before its one message, kept
 * here as the baseline.
 */
const HOLD_IN_A_TRANSACTION =
  'WITH expired AS (DELETE FROM credit_holds WHERE user_id = $1 AND expires_at <= now() AND key <> $2), ' +
  'held AS (SELECT coalesce(sum(amount), 0)::bigint AS n FROM credit_holds ' +
  'WHERE user_id = $1 AND key <> $2 AND expires_at > now()), ' +
  'hold AS (INSERT INTO credit_holds (key, user_id, amount, expires_at) ' +
  "SELECT $2::text, $1::uuid, $3::bigint, now() + $4::bigint * interval '1 millisecond' FROM held WHERE $5::bigint - held.n >= $3::bigint " +
  'ON CONFLICT (key) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at ' +
  'WHERE credit_holds.user_id = $1) ' +
  'SELECT n FROM held';

/**
 * A hold (and its release) as the service sends it, one message, against the same hold as a
 * transaction of four round trips, in alternating rounds: wall time, PostgreSQL's CPU and this
 * process's CPU per hold, and their ratios.
 */
async function holdSideBySide(
  dataSource: DataSource,
  credits: CreditsService,
  userId: string,
  postgresCpu: () => number,
): Promise<void> {
  const sides = {
    one_message: (key: string) => credits.reserve(userId, key, 1),
    transaction: (key: string) =>
      dataSource.transaction(async (em) => {
        const [{ credits: balance }] = await em.query(
          preparedStatement('bench_lock', 'SELECT credits FROM users WHERE id = $1 FOR UPDATE'),
          [userId],
        );
        await em.query(preparedStatement('bench_hold', HOLD_IN_A_TRANSACTION), [userId, key, 1, 60_000, balance]);
      }),
  };
  const hold = async (side: keyof typeof sides): Promise<void> => {
    const key = `chat:${randomUUID()}:1`;
    await sides[side](key);
    await credits.release(userId, key);
  };
  await sideBySide(
    'a credit hold and its release: one message vs a transaction of four round trips',
    (side) => hold(side),
    postgresCpu,
  );
}

/**
 * The charge as a transaction of five round trips (BEGIN, the balance's lock, the ledger row with the
 * hold's release, the balance, COMMIT): how CreditsService sent it before its one message, kept here
 * as the baseline (a chat turn's charge: no run's usage).
 */
const CHARGE_LEDGER_IN_A_TRANSACTION =
  'WITH released AS (DELETE FROM credit_holds WHERE key = $4 AND user_id = $1), ' +
  'previous AS (SELECT delta FROM credit_ledger WHERE reference = $4 LIMIT 1), ' +
  'inserted AS (INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) ' +
  'SELECT $1::uuid, $2::bigint, $3::text, $4::text, $5::bigint WHERE NOT EXISTS (SELECT 1 FROM previous)) ' +
  'SELECT (SELECT delta FROM previous) AS previous';

/** A chat turn's charge as the service sends it, one message, against the same charge as a transaction of five round trips. */
async function chargeSideBySide(
  dataSource: DataSource,
  credits: CreditsService,
  users: UsersRepository,
  userId: string,
  postgresCpu: () => number,
): Promise<void> {
  const sides = {
    one_message: (key: string) => credits.charge(userId, 1, 'chat_turn', key),
    transaction: (key: string) =>
      dataSource.transaction(async (em) => {
        const balance = (await users.lockCredits(em, userId))!;
        const [{ previous }] = await em.query(preparedStatement('bench_charge', CHARGE_LEDGER_IN_A_TRANSACTION), [
          userId,
          -1,
          'chat_turn',
          key,
          balance - 1,
        ]);
        if (previous === null) {
          await users.setCredits(em, userId, balance - 1, { dropCached: false });
        }
      }),
  };
  await sideBySide(
    "a chat turn's charge: one message vs a transaction of five round trips",
    (side) => sides[side](`chat:${randomUUID()}:1`),
    postgresCpu,
  );
}

/**
 * Two ways of one credit rule in alternating rounds: wall time, PostgreSQL's CPU and this process's
 * CPU a call, and the wall time's ratio.
 */
async function sideBySide(
  title: string,
  call: (side: 'one_message' | 'transaction') => Promise<unknown>,
  postgresCpu: () => number,
): Promise<void> {
  const figures: Record<'one_message' | 'transaction', { wall: number[]; postgres: number[]; node: number[] }> = {
    one_message: { wall: [], postgres: [], node: [] },
    transaction: { wall: [], postgres: [], node: [] },
  };
  for (let i = 0; i < 200; i += 1) {
    await call(i % 2 === 0 ? 'one_message' : 'transaction');
  }
  for (let round = 0; round < ROUNDS * 2; round += 1) {
    for (const side of ['one_message', 'transaction'] as const) {
      const postgresBefore = postgresCpu();
      const nodeBefore = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < CALLS_PER_ROUND; i += 1) {
        await call(side);
      }
      const node = process.cpuUsage(nodeBefore);
      figures[side].wall.push((performance.now() - started) / CALLS_PER_ROUND);
      figures[side].postgres.push((postgresCpu() - postgresBefore) / CALLS_PER_ROUND);
      figures[side].node.push((node.user + node.system) / 1000 / CALLS_PER_ROUND);
    }
  }
  const one = figures.one_message;
  const many = figures.transaction;
  line(title, {
    one_message_wall: fmt(median(one.wall)),
    transaction_wall: fmt(median(many.wall)),
    wall_ratio: (median(one.wall) / median(many.wall)).toFixed(2),
    one_message_postgres_cpu: fmt(median(one.postgres)),
    transaction_postgres_cpu: fmt(median(many.postgres)),
    one_message_node_cpu: fmt(median(one.node)),
    transaction_node_cpu: fmt(median(many.node)),
    node_cpu_ratio: (median(one.node) / median(many.node)).toFixed(2),
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
