/**
 * `node dist/bench/statements.js`: the hot statements of a run's path (webhook intake, a run's start,
 * its tool call's site, the model turn's check and charge, its end and archive) and a chat turn's
 * save, each sent as a named prepared
 * statement (what the service sends) and as an unnamed one (parsed and planned on every call), in
 * alternating rounds on one PostgreSQL of its own (`npm start`'s durability). Prints, per statement,
 * the median wall time and PostgreSQL CPU per call on each side and their ratio. The ids are random:
 * every statement finds nothing and writes nothing (the charge and the save are refused), so both
 * sides do the same work but the planning.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { fmt, line, percentile } from './stats.js';
import { clockTicks, processesCpu } from './scale.js';
import { startEmbeddedPostgres } from '../scripts/runtime/postgres.js';
import { freePort } from '../scripts/runtime/processes.js';
import { AgentsRepository } from '../src/agents/agents.repository.js';
import { ChatRepository } from '../src/chat/chat.repository.js';
import type { CacheInvalidationBus } from '../src/common/cache/invalidation-bus.js';
import { CreditsRepository } from '../src/credits/credits.repository.js';
import { loadSettings } from '../src/config/settings.js';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { ENTITIES } from '../src/entities.js';
import { ModelRepository } from '../src/model/model.repository.js';
import { RunExecutionRepository } from '../src/runs/run-execution.repository.js';
import { RunsRepository } from '../src/runs/runs.repository.js';

const CALLS_PER_ROUND = 1500;
const ROUNDS = 3;

/** Sends every statement the repositories name as it is, or (`named` false) as its bare text. */
function switchable(dataSource: DataSource): { set(named: boolean): void } {
  const query = dataSource.query.bind(dataSource);
  let named = true;
  dataSource.query = ((statement: unknown, parameters?: unknown[]) =>
    query(
      !named && typeof statement === 'object' && statement !== null
        ? (statement as { text: string }).text
        : (statement as string),
      parameters,
    )) as DataSource['query'];
  return { set: (value) => void (named = value) };
}

/** What the two statements that find nothing to write answer: PostgreSQL's refusal, expected. */
const refused = (err: { code?: string }): void => {
  if (err.code !== 'P0002' && err.code !== '23503') {
    throw err;
  }
};

const median = (values: number[]): number => percentile(values, 50);
const postgresCpu = (ticks: number): number => processesCpu(['-x', 'postgres'], ticks, true);

async function main(): Promise<void> {
  // The migrations' lines, and an error line for each refusal below (DatabaseLogger): this bench
  // prints only its figures.
  Logger.overrideLogger(false);
  const dir = mkdtempSync(path.join(tmpdir(), 'agentsite-bench-statements-'));
  const postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port: await freePort() });
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
    const credits = new CreditsRepository(dataSource, undefined as unknown as CacheInvalidationBus);
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
      // These two refuse ids that match nothing (no such user: P0002; no such session: a foreign key),
      // on both sides alike.
      'charge_credits (every model turn)': () =>
        credits.charge(randomUUID(), 1, 'chat_turn', `chat:${randomUUID()}:1`, undefined).catch(refused),
      'chat_save_turn (chat turn end)': () =>
        chat
          .saveTurn({
            sessionId: randomUUID(),
            content: 'hello',
            reply: { id: randomUUID(), content: 'hi', toolCalls: [], modelMessages: [], usage: null, cut: false },
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
  } finally {
    await dataSource?.destroy();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
