/**
 * Benchmarks 10 and 11, the costs that do not depend on the machine, per run kind (run-kinds.ts):
 *
 * 10. The billable Temporal actions of a run (actions.ts), read from the histories of every workflow
 *     execution it involved: the agent's queue (each of its executions), the schedule's trigger
 *     workflow and the schedule's action. The agent's queue holds many runs an execution, so its
 *     actions are counted over RUNS back to back on one agent (one execution's worth: it then hands
 *     over, archiving them, and continues as new) and divided, and also for a single run on a fresh
 *     agent (an execution of its own: its start and its timer are that run's; its hand-over, the
 *     archive and the continue-as-new, comes AGENT_QUEUE_EXECUTION_SECONDS later and is not counted).
 *     Beside each, the bare workflow making the same calls, started as the kind's runs are. Goal
 *     (issue 41): ≤ 1.3× the bare workflow's.
 * 11. The statements the service sends PostgreSQL over the same RUNS runs (statements-per-run.ts):
 *     all of them, the writes and the transactions per run, and the statements sent most
 *     (BENCH_STATEMENTS=all: every statement, with its calls per run).
 *
 * Each run waits for the previous one to have wholly ended: the counts are the same from one bench
 * run to the next, whatever the machine's load.
 */
import type { Client } from '@temporalio/client';
import { actionsOf, type ActionCount, describeActions, totalActions } from './actions.js';
import { createBareActivities } from './bare.activities.js';
import { startBareWorker } from './bare-worker.js';
import { bareSide, type KindsContext, RUN_KINDS, type RunKind, type RunSide, serviceSide } from './run-kinds.js';
import type { RunWatch } from './run-watch.js';
import { pauseMaintenance, type StatementCount, type StatementCounter } from './statements-per-run.js';
import { line, verdict } from './stats.js';
import { type FakeModel, toolNamed } from '../test/fixtures/fake-model.js';
import type { Http } from '../test/utils/http.js';
import { MAX_RUNS_PER_EXECUTION } from '../workflows/contracts.js';

/** Runs back to back on one agent: one execution of its queue, which then hands over. */
export const RUNS = MAX_RUNS_PER_EXECUTION;
/** Bare runs per kind (each a workflow of its own: the figure is the same for every one). */
const BARE_RUNS = 3;
/** Goal 10: a run's actions over the bare workflow's. */
const ACTIONS_GOAL = 1.3;

export interface CostsContext {
  api: Http;
  client: Client;
  model: FakeModel;
  watch: RunWatch;
  /** Resolves once no run of the benchmarks before is queued or executing (their statements would count). */
  drained: () => Promise<void>;
  /** Benchmark 11's counter, opened as the bench's PostgreSQL started. */
  counter?: StatementCounter;
  temporalAddress: string;
  userToken: string;
  siteId: string;
  site: { url: string; apiToken: string; ca: string };
}

export interface KindCosts {
  /** Actions per run over RUNS back to back, on a fresh agent's single run, and the bare workflow's. */
  actions: number;
  singleActions: number;
  bareActions: number;
  statements?: StatementCount;
}

export type CostFigures = Partial<Record<RunKind, KindCosts>>;

/** Makes `n` runs on a side and checks each completed (read once the window is over). */
async function runs(side: RunSide, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) {
    ids.push(await side.run());
  }
  return ids;
}

async function expectCompleted(watch: RunWatch, runIds: string[]): Promise<void> {
  for (const id of runIds) {
    const status = await watch.ended(id);
    if (status !== 'completed') {
      throw new Error(`run ${id} ended ${status}`);
    }
  }
}

const perRun = (count: ActionCount, n: number): number => totalActions(count) / n;
const two = (n: number): string => (Math.round(n * 100) / 100).toString();

export async function runCosts(
  ctx: CostsContext,
  want: { actions: boolean; statements: boolean },
): Promise<CostFigures> {
  const figures: CostFigures = {};
  await ctx.drained();
  ctx.model.fallback = (req) =>
    req.body.messages.length === 1 && (req.body.tools ?? []).length > 0
      ? { toolUses: [{ name: toolNamed(req, 'search_notes'), input: { query: 'x' } }] }
      : { text: 'done' };
  const bareQueue = `bench-bare-costs-${Date.now()}`;
  const bareWorker = await startBareWorker(
    ctx.temporalAddress,
    bareQueue,
    createBareActivities({
      modelUrl: ctx.model.url,
      toolUrl: `${ctx.site.url}/api/tools/search_notes`,
      token: ctx.site.apiToken,
      ca: ctx.site.ca,
    }),
  );
  const kinds: KindsContext = {
    api: ctx.api,
    client: ctx.client,
    userToken: ctx.userToken,
    siteId: ctx.siteId,
    bareQueue,
  };
  const counter = want.statements ? ctx.counter : undefined;
  if (want.statements && counter === undefined) {
    throw new Error('benchmark 11 needs the statement counter');
  }
  const resume = await pauseMaintenance(ctx.client);
  const tag = Date.now();
  try {
    for (const kind of RUN_KINDS) {
      // RUNS back to back on one agent: the statements (11) and the actions per run (10).
      const agent = await serviceSide(kinds, kind, `costs ${kind} ${tag}`);
      await counter?.start();
      const ids = await runs(agent, RUNS);
      const statements = await counter?.read();
      await expectCompleted(ctx.watch, ids);
      const costs: KindCosts = { actions: NaN, singleActions: NaN, bareActions: NaN };
      if (statements !== undefined) {
        costs.statements = statements;
      }
      if (want.actions) {
        const many = await actionsOf(ctx.client, agent.involved());
        const fresh = await serviceSide(kinds, kind, `costs ${kind} single ${tag}`);
        await expectCompleted(ctx.watch, await runs(fresh, 1));
        const single = await actionsOf(ctx.client, fresh.involved());
        await fresh.remove();
        const bare = await bareSide(kinds, kind, `${kind}-${tag}`);
        await runs(bare, BARE_RUNS);
        const bareCount = await actionsOf(ctx.client, bare.involved());
        await bare.remove();
        costs.actions = perRun(many, RUNS);
        costs.singleActions = perRun(single, 1);
        costs.bareActions = perRun(bareCount, BARE_RUNS);
        const ratio = costs.actions / costs.bareActions;
        const ratioSingle = costs.singleActions / costs.bareActions;
        line(`10. Temporal actions per run (${kind}) vs a bare workflow`, {
          [`service_per_run_${RUNS}_back_to_back`]: two(costs.actions),
          service_single_run_fresh_agent: two(costs.singleActions),
          bare_per_run: two(costs.bareActions),
          ratio: two(ratio),
          ratio_single: two(ratioSingle),
          goal: `≤${ACTIONS_GOAL}×`,
          verdict: verdict(ratio <= ACTIONS_GOAL && ratioSingle <= ACTIONS_GOAL),
          service: describeActions(many, RUNS),
          single: describeActions(single, 1),
          bare: describeActions(bareCount, BARE_RUNS),
        });
      }
      await agent.remove();
      if (statements !== undefined) {
        line(`11. PostgreSQL statements per run (${kind}, ${RUNS} back to back, API and worker)`, {
          statements_per_run: two(statements.statements / RUNS),
          writes_per_run: two(statements.writes / RUNS),
          transactions_per_run: two(statements.transactions / RUNS),
          goal: 'printed; none reads a whole table (npm run bench:growth)',
          verdict: 'printed',
          // The pings, heartbeats and sweeps the service sends by time (statements-per-run.ts).
          sent_by_time_left_out: statements.byTime,
        });
        // The statements sent most (BENCH_STATEMENTS=all: every one).
        for (const row of statements.rows.slice(0, process.env.BENCH_STATEMENTS === 'all' ? undefined : 8)) {
          console.log(`    ${two(row.calls / RUNS).padStart(6)} a run  ${row.query.slice(0, 150)}`);
        }
      }
      figures[kind] = costs;
    }
  } finally {
    await resume();
    await bareWorker.stop();
  }
  return figures;
}
