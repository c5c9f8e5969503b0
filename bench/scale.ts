/**
 * Benchmarks 7-9 (issue #17), the service at scale: 1,000 cron agents due in the same minute, 100
 * agents under a sustained webhook load, 100 chat turns streaming at once. Each against a baseline
 * measured in the same run: bare Temporal schedules and workflows making the same calls, or the
 * fake model asked directly.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {
  type Client,
  isGrpcDeadlineError,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import { createBareActivities } from './bare.activities.js';
import { startBareWorker } from './bare-worker.js';
import { firstText, post, prepareFloor, serviceRequests } from './client.js';
import { fmt, line, load, percentile, verdict } from './stats.js';
import { historiesOf, medianPhases, type Phase, runPhases } from './history-phases.js';
import type { RunWatch } from './run-watch.js';
import type { FakeModel, RecordedRequest } from '../test/fixtures/fake-model.js';
import { toolNamed } from '../test/fixtures/fake-model.js';
import type { Http } from '../test/utils/http.js';
import type { Stack } from '../test/utils/stack.js';
import { registerUser } from '../test/utils/users.js';

export interface ScaleContext {
  api: Http;
  stack: Stack;
  adminToken: string;
  client: Client;
  model: FakeModel;
  temporalAddress: string;
  /** The reference site, the API token the bench users keep for it, and the CA that signed it. */
  site: { url: string; apiToken: string; ca: string };
  /** Resolves once no agent run is executing. */
  drained: () => Promise<void>;
  /** Runs' ends, from their rows. */
  watch: RunWatch;
  /** The minimal Nest app on Fastify with the floor routes (adapters.ts), for benchmark 9. */
  floor?: { url: string; pid: number };
  /**
   * How long after its due time a side of benchmark 7 may still be counted as having run: 60 s on the
   * dev server, 240 s on the cluster (BENCH_TEMPORAL=cluster), where both sides do end and a ratio of
   * their p99 can be taken.
   */
  cronWindowMs: number;
  /** The stack's Temporal server and PostgreSQL server (postmaster), for their CPU time (stackCpu). */
  pids: { temporal: number; postgres: number };
}

/** Enough sockets for every request of a benchmark in flight at once (the shared agent keeps 64). */
const wide = new http.Agent({ keepAlive: true, maxSockets: 512 });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface BenchUser {
  id: string;
  token: string;
  auth: Record<string, string>;
  siteId?: string;
}

/** A user of the given tier with credits to spare, the reference site in its vault when asked. */
async function benchUser(ctx: ScaleContext, tier: 'harness' | 'team', withSite = false): Promise<BenchUser> {
  const user = await registerUser(ctx.api);
  await ctx.api.patch(`/api/admin/users/${user.id}`, { tier, credits: 100_000_000 }, { token: ctx.adminToken });
  const result: BenchUser = { id: user.id, token: user.token, auth: { authorization: `Bearer ${user.token}` } };
  if (withSite) {
    const siteId = (await ctx.api.post('/api/vault/sites', { url: ctx.site.url }, { token: user.token })).body
      .id as string;
    await ctx.api.post(`/api/vault/sites/${siteId}/token`, { token: ctx.site.apiToken }, { token: user.token });
    result.siteId = siteId;
  }
  return result;
}

/**
 * Sends a request again (up to three times, two seconds apart) while the API answers 5xx: under a
 * burst the Temporal dev server can time out a schedule's creation or update, which the API reports
 * as a 500 after rolling the agent's row back, as a client would then retry.
 */
async function retried<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const res = await send();
    if (res.status < 500 || attempt === 3) {
      return res;
    }
    await sleep(2_000);
  }
}

async function createAgent(ctx: ScaleContext, owner: BenchUser, body: Record<string, unknown>) {
  const res = await retried(() => post(`${ctx.stack.baseUrl}/api/agents`, body, owner.auth, wide));
  if (res.status !== 201) {
    throw new Error(`creating an agent answered ${res.status} ${res.text}`);
  }
  return JSON.parse(res.text) as { id: string; webhookSecret?: string };
}

async function deleteSchedules(ctx: ScaleContext, scheduleIds: string[]): Promise<void> {
  await load(scheduleIds.length, 8, async (i) => {
    try {
      await ctx.client.schedule.getHandle(scheduleIds[i]!).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) {
        throw err;
      }
    }
  });
}

/**
 * Deletes the agents; a deletion the API refuses is tried again once after a pause (a load that
 * leaves Temporal slow can fail one), and what still fails is reported with the API's log lines.
 */
async function deleteAgents(ctx: ScaleContext, agents: Array<{ id: string; owner: BenchUser }>): Promise<void> {
  const failed: string[] = [];
  await load(agents.length, 8, async (i) => {
    for (let attempt = 1; ; attempt += 1) {
      const res = await ctx.api.delete(`/api/agents/${agents[i]!.id}`, { token: agents[i]!.owner.token });
      if (res.status === 204 || res.status === 404) {
        return;
      }
      if (attempt === 2) {
        failed.push(`${res.status} ${res.text}`);
        return;
      }
      await sleep(2_000);
    }
  });
  if (failed.length > 0) {
    const apiLog = readFileSync(ctx.stack.api.logFile, 'utf8')
      .split('\n')
      .filter((l) => /error/i.test(l))
      .slice(-20);
    throw new Error(
      `${failed.length} of ${agents.length} agents could not be deleted, e.g. ${failed[0]}\n${apiLog.join('\n')}`,
    );
  }
}

/** The bare side's worker in this process, with the bare activities (bare-worker.ts). */
async function bareWorker(ctx: ScaleContext, taskQueue: string): Promise<() => Promise<void>> {
  const { stop } = await startBareWorker(
    ctx.temporalAddress,
    taskQueue,
    createBareActivities({
      modelUrl: ctx.model.url,
      toolUrl: `${ctx.site.url}/api/tools/search_notes`,
      token: ctx.site.apiToken,
      ca: ctx.site.ca,
    }),
  );
  return stop;
}

/** Waits until visibility counts no running workflow of the query (or gives up after `limitMs`). */
async function noneRunning(client: Client, workflowType: string, limitMs: number): Promise<number> {
  const by = Date.now() + limitMs;
  for (;;) {
    const { count } = await client.workflow.count(`WorkflowType = "${workflowType}" AND ExecutionStatus = "Running"`);
    if (count === 0 || Date.now() > by) {
      return count;
    }
    await sleep(500);
  }
}

const MINUTE_MS = 60_000;
/** Benchmark 7 times its first items created, to choose a due minute the rest will be ready for. */
const CRON_PROBE = 40;
const CRON_PROBE_WARMUP = 10;

/** A daily cron (UTC) for the minute of `at`. */
function cronAt(at: number): string {
  const date = new Date(at);
  return `${date.getUTCMinutes()} ${date.getUTCHours()} * * *`;
}

/**
 * Creates `n` items due in the same minute, one far enough ahead that all are created before it:
 * the first few are created with a cron 12 hours away, and their pace tells how long the rest will
 * take (the shared machine's pace varies by a factor of several); then they are moved to that minute.
 */
async function createDueTogether(
  n: number,
  create: (i: number, cron: string) => Promise<void>,
  retime: (i: number, cron: string) => Promise<void>,
): Promise<{ due: number; setupMs: number; spareMs: number }> {
  const started = Date.now();
  const later = cronAt(started + 12 * 60 * MINUTE_MS);
  // The first few warm up (connections, caches): the pace is taken from the next ones.
  await load(CRON_PROBE_WARMUP, 8, (i) => create(i, later));
  const timed = Date.now();
  await load(CRON_PROBE - CRON_PROBE_WARMUP, 8, (i) => create(CRON_PROBE_WARMUP + i, later));
  const perItemMs = (Date.now() - timed) / (CRON_PROBE - CRON_PROBE_WARMUP);
  const due = Math.ceil((Date.now() + perItemMs * n * 1.3 + 10_000) / MINUTE_MS) * MINUTE_MS;
  // The first few are moved before the rest exist: an update asks the schedule's workflow for its
  // description first (a query), which a server still starting a thousand schedules' workflows
  // answers late or not at all (two whole runs ended there).
  await load(CRON_PROBE, 8, (i) => retime(i, cronAt(due)));
  await load(n - CRON_PROBE, 8, (i) => create(CRON_PROBE + i, cronAt(due)));
  return { due, setupMs: Date.now() - started, spareMs: due - Date.now() };
}

/** Tries of a setup call that the Temporal server did not answer in time. */
const SETUP_TRIES = 5;

/**
 * A setup call to Temporal, tried again when the server did not answer within the client's deadline:
 * the dev server sometimes answers late while it starts a thousand schedules' workflows. The call must
 * be safe to repeat.
 */
async function patiently(call: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await call();
      return;
    } catch (err) {
      if (attempt >= SETUP_TRIES || !isGrpcDeadlineError(err)) {
        throw err;
      }
      console.error(`[bench] Temporal did not answer a setup call in time (attempt ${attempt}); trying again`);
      await sleep(2_000);
    }
  }
}

/**
 * 7. 1,000 cron agents due in the same minute: due time → each run's first model turn, vs 1,000 bare
 * Temporal schedules with the same cron, each starting a workflow whose first activity calls the model.
 * One side after the other (the bare schedules are created, fire and finish before the agents are
 * created), so they never compete.
 */
export async function cronBurst(ctx: ScaleContext): Promise<void> {
  const N7 = 1000;
  const CRON_RUN_LIMIT_MS = ctx.cronWindowMs;
  const PER_USER = 200; // the team tier's agent limit
  const arrivals = new Map<string, number>();
  ctx.model.fallback = (req) => {
    const marker = /bench7-(svc|bare)-\d+/.exec(JSON.stringify(req.body))?.[0];
    if (marker !== undefined && !arrivals.has(marker)) {
      arrivals.set(marker, req.receivedAt);
    }
    return { text: 'done' };
  };
  const delays = (side: 'svc' | 'bare', due: number): number[] =>
    Array.from({ length: N7 }, (_, i) => arrivals.get(`bench7-${side}-${i}`))
      .filter((at): at is number => at !== undefined)
      .map((at) => at - due);
  const tracing = process.env.BENCH_TRACE === '1';
  const ticks = clockTicks();
  /** Goal 7's CPU per run: every process of the stack (stackCpu), from the due time until the last run reached the model. */
  const cpuPerRun: Record<'svc' | 'bare', number> = { svc: NaN, bare: NaN };
  const waitSide = async (side: 'svc' | 'bare', due: number): Promise<number[]> => {
    await sleep(Math.max(0, due - Date.now()));
    const before = stackCpu(ctx, ticks);
    while (delays(side, due).length < N7 && Date.now() < due + CRON_RUN_LIMIT_MS) {
      await sleep(250);
    }
    const after = stackCpu(ctx, ticks);
    cpuPerRun[side] =
      Object.keys(after).reduce((sum, name) => sum + after[name]! - before[name]!, 0) /
      Math.max(1, delays(side, due).length);
    if (tracing) {
      // BENCH_TRACE: where the CPU went from the due time until the last run reached the model (or
      // the window closed), per run that reached it.
      const ran = delays(side, due).length;
      const spent = Object.entries(after).map(
        ([name, ms]) => `${name} ${fmt((ms - before[name]!) / Math.max(1, ran))}`,
      );
      console.log(
        `trace cpu 7 (${side}, per run, ${ran} runs, ${fmt(Date.now() - due)} from due): ${spent.join(', ')}`,
      );
    }
    return delays(side, due);
  };
  // A percentile of all N7 runs, those that did not reach the model within the limit counted as later.
  const late = (delaysMs: number[], p: number): string => {
    const value = percentile([...delaysMs, ...Array<number>(N7 - delaysMs.length).fill(Infinity)], p);
    return Number.isFinite(value) ? fmt(value) : `>${CRON_RUN_LIMIT_MS / 1000} s`;
  };
  const progress = (side: string, setup: { setupMs: number; spareMs: number }): void =>
    console.log(
      `[bench] 7: ${N7} ${side} created in ${(setup.setupMs / 1000).toFixed(1)} s, ` +
        `${(setup.spareMs / 1000).toFixed(0)} s before they are due`,
    );

  // The baseline: bare schedules with the service's policies (src/agents/schedules.service.ts).
  const stopBare = await bareWorker(ctx, 'bench-bare-cron');
  const tag = Date.now();
  const scheduleIds = Array.from({ length: N7 }, (_, i) => `bench7-bare-${tag}-${i}`);
  const users = await Promise.all(Array.from({ length: Math.ceil(N7 / PER_USER) }, () => benchUser(ctx, 'team')));
  const agents: Array<{ id: string; owner: BenchUser }> = [];
  try {
    const bareSetup = await createDueTogether(
      N7,
      (i, cron) =>
        patiently(async () => {
          const spec = { cronExpressions: [cron], timezone: 'UTC' };
          try {
            await ctx.client.schedule.create({
              scheduleId: scheduleIds[i]!,
              spec,
              action: {
                type: 'startWorkflow',
                workflowType: 'bareCronWorkflow',
                workflowId: `bench7-bare-run-${tag}-${i}`,
                taskQueue: 'bench-bare-cron',
                args: [`bench7-bare-${i}`],
              },
              policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '5 minutes' },
            });
          } catch (err) {
            if (!(err instanceof ScheduleAlreadyRunning)) {
              throw err;
            }
            // An earlier try that timed out did create it: the cron is what counts.
            await ctx.client.schedule.getHandle(scheduleIds[i]!).update((previous) => ({ ...previous, spec }));
          }
        }),
      (i, cron) =>
        patiently(() =>
          ctx.client.schedule
            .getHandle(scheduleIds[i]!)
            .update((previous) => ({ ...previous, spec: { cronExpressions: [cron], timezone: 'UTC' } })),
        ),
    );
    progress('bare schedules', bareSetup);
    const bare = await waitSide('bare', bareSetup.due);
    // The dev server is still firing the bare schedules it did not reach in time: delete them and let
    // their workflows end before the agents are created, so the service's side does not inherit that
    // backlog (the first whole run failed here: an agent's PATCH timed out on a busy Temporal).
    await deleteSchedules(ctx, scheduleIds);
    await noneRunning(ctx.client, 'bareCronWorkflow', 120_000);

    // The service: scheduled agents created through the API by several users (the team tier's limit).
    const serviceSetup = await createDueTogether(
      N7,
      async (i, cron) => {
        const owner = users[Math.floor(i / PER_USER)]!;
        const agent = await createAgent(ctx, owner, {
          name: `cron ${i}`,
          systemPrompt: `bench7-svc-${i}`,
          siteIds: [],
          trigger: { type: 'scheduled', cron, timezone: 'UTC' },
        });
        agents[i] = { id: agent.id, owner };
      },
      async (i, cron) => {
        const res = await retried(() =>
          ctx.api.patch(
            `/api/agents/${agents[i]!.id}`,
            { trigger: { type: 'scheduled', cron, timezone: 'UTC' } },
            { token: agents[i]!.owner.token },
          ),
        );
        if (res.status !== 200) {
          throw new Error(`retiming an agent answered ${res.status} ${res.text}`);
        }
      },
    );
    progress('scheduled agents', serviceSetup);
    // Bare runs late past the limit finish while the agents are created; none may still compete here.
    const bareLeft = await noneRunning(
      ctx.client,
      'bareCronWorkflow',
      Math.max(0, serviceSetup.due - Date.now() - 1000),
    );
    const service = await waitSide('svc', serviceSetup.due);
    // Printed before the clean-up, which takes minutes; runs still waiting past the limit are
    // cancelled with their agents.
    line('7. 1,000 cron agents due in the same minute: due → first model turn vs bare Temporal schedules', {
      service_p50: late(service, 50),
      service_p99: late(service, 99),
      service_max: late(service, 100),
      service_ran: `${service.length}/${N7} in ${CRON_RUN_LIMIT_MS / 1000} s`,
      bare_p50: late(bare, 50),
      bare_p99: late(bare, 99),
      bare_max: late(bare, 100),
      bare_ran: `${bare.length}/${N7} in ${CRON_RUN_LIMIT_MS / 1000} s`,
      ratio_p99:
        service.length === N7 && bare.length === N7
          ? (percentile(service, 99) / percentile(bare, 99)).toFixed(2)
          : 'n/a (not all ran in time)',
      cpu_per_run: fmt(cpuPerRun.svc),
      bare_cpu_per_run: fmt(cpuPerRun.bare),
      cpu_ratio: (cpuPerRun.svc / cpuPerRun.bare).toFixed(2),
      goal: "CPU per run ≤1.5× bare, p99 ≤1.2× bare (compose's server: BENCH_TEMPORAL=cluster)",
      // Runs that did not reach the model in the window count as later than any that did.
      verdict: verdict(
        cpuPerRun.svc <= 1.5 * cpuPerRun.bare &&
          service.length === N7 &&
          bare.length === N7 &&
          percentile(service, 99) <= 1.2 * percentile(bare, 99),
      ),
      ...(bareLeft > 0 ? { bare_still_running_when_service_due: bareLeft } : {}),
      setup: `${(serviceSetup.setupMs / 1000).toFixed(0)} s agents, ${(bareSetup.setupMs / 1000).toFixed(0)} s schedules`,
    });
  } finally {
    await deleteSchedules(ctx, scheduleIds);
    await deleteAgents(
      ctx,
      agents.filter((a) => a !== undefined),
    );
    await stopBare();
  }
}

/** Benchmark 8's runs in flight at once (spread over its 100 agents), warm-up and measured window per round and side. */
const SUSTAINED_IN_FLIGHT = 25;
const SUSTAINED_WARMUP_MS = 5_000;
const SUSTAINED_WINDOW_MS = 15_000;

/**
 * A closed loop: `SUSTAINED_IN_FLIGHT` jobs always in flight until the window ends; counts the jobs
 * that completed inside the window (after the warm-up, long enough for the first jobs to complete)
 * and their latencies.
 */
async function closedLoop(job: (i: number) => Promise<void>): Promise<{ completed: number; latencies: number[] }> {
  const windowStart = performance.now() + SUSTAINED_WARMUP_MS;
  const windowEnd = windowStart + SUSTAINED_WINDOW_MS;
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SUSTAINED_IN_FLIGHT }, async () => {
      while (performance.now() < windowEnd) {
        const started = performance.now();
        await job(next++);
        const ended = performance.now();
        if (ended >= windowStart && ended < windowEnd) {
          latencies.push(ended - started);
        }
      }
    }),
  );
  return { completed: latencies.length, latencies };
}

/**
 * 8. 100 agents under a sustained webhook load, each run a tool call and two model turns (as in
 * benchmark 2): completed runs per second with a fixed number in flight (a closed loop over the 100
 * agents in turn), vs bare workflows making the same calls with as many in flight. Alternating rounds,
 * the counts of their windows summed.
 */
/** What the capacity table takes from benchmark 8 (capacity.ts). */
export interface SustainedFigures {
  /** The service's runs completed per second in the measured windows. */
  runsPerSecond: number;
  /** The worker's CPU seconds per second over the service's rounds (warm-up included), and per run. */
  workerCpuPerSecond: number;
  workerCpuMsPerRun: number;
}

export async function sustainedWebhooks(ctx: ScaleContext): Promise<SustainedFigures> {
  const N8 = 100;
  const ROUNDS = 2;
  const owner = await benchUser(ctx, 'team', true);
  const agents: Array<{ id: string; webhookSecret: string; owner: BenchUser }> = [];
  await load(N8, 8, async (i) => {
    const agent = await createAgent(ctx, owner, {
      name: `load ${i}`,
      systemPrompt: 'p',
      siteIds: [owner.siteId],
      trigger: { type: 'webhook', schema: [] },
    });
    agents.push({ id: agent.id, webhookSecret: agent.webhookSecret!, owner });
  });
  ctx.model.fallback = (req) =>
    req.body.messages.length === 1 && (req.body.tools ?? []).length > 0
      ? { toolUses: [{ name: toolNamed(req, 'search_notes'), input: { query: 'x' } }] }
      : { text: 'done' };
  const stopBare = await bareWorker(ctx, 'bench-bare-load');
  // Round robin: an agent's next run is offered long after its previous one ended (N8 > in flight).
  // BENCH_TRACE: each job's wall-clock span, to read its phases from the histories afterwards.
  const traced: { service: Array<[string, number, number]>; bare: Array<[string, number, number]> } = {
    service: [],
    bare: [],
  };
  const viaWebhook = async (i: number): Promise<void> => {
    const agent = agents[i % N8]!;
    const from = Date.now();
    const res = await post(
      `${ctx.stack.baseUrl}/api/webhooks/agent/${agent.id}`,
      { i },
      { 'x-webhook-secret': agent.webhookSecret },
      wide,
    );
    if (res.status !== 202) {
      throw new Error(`webhook answered ${res.status} ${res.text}`);
    }
    // Completed as its user reads it: its row, written by its last model turn (as in benchmark 2).
    const status = await ctx.watch.ended((JSON.parse(res.text) as { runId: string }).runId);
    if (status !== 'completed') {
      throw new Error(`a run ended ${status}`);
    }
    traced.service.push([`agent-${agent.id}`, from, Date.now()]);
  };
  let bareN = 0;
  const started = Date.now();
  const bareRun = async (): Promise<void> => {
    const workflowId = `bench8-bare-${started}-${(bareN += 1)}`;
    const from = Date.now();
    await ctx.client.workflow.execute('bareRunWorkflow', { taskQueue: 'bench-bare-load', workflowId });
    traced.bare.push([workflowId, from, Date.now()]);
  };
  const service: { completed: number; latencies: number[] } = { completed: 0, latencies: [] };
  const bare: { completed: number; latencies: number[] } = { completed: 0, latencies: [] };
  const worker = { cpuMs: 0, wallMs: 0 };
  try {
    await ctx.drained();
    // BENCH_TRACE: the CPU time each process spent per run completed, on each side (stackCpu).
    const tracing = process.env.BENCH_TRACE === '1';
    const ticks = clockTicks();
    const cpuNow = (): Record<string, number> => (tracing ? stackCpu(ctx, ticks) : {});
    const cpu = { service: {} as Record<string, number>, bare: {} as Record<string, number> };
    const timedRound = async (
      side: 'service' | 'bare',
      job: (i: number) => Promise<void>,
    ): Promise<{ completed: number; latencies: number[] }> => {
      const before = cpuNow();
      const result = await closedLoop(job);
      for (const [name, ms] of Object.entries(cpuNow())) {
        cpu[side][name] = (cpu[side][name] ?? 0) + ms - before[name]!;
      }
      return result;
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      // The worker's CPU over the service's rounds, for the capacity table.
      const workerBefore = cpuMs(ctx.stack.worker!.child.pid!, ticks);
      const roundStart = performance.now();
      const s = await timedRound('service', viaWebhook);
      worker.cpuMs += cpuMs(ctx.stack.worker!.child.pid!, ticks) - workerBefore;
      worker.wallMs += performance.now() - roundStart;
      service.completed += s.completed;
      service.latencies.push(...s.latencies);
      await ctx.drained();
      const b = await timedRound('bare', bareRun);
      bare.completed += b.completed;
      bare.latencies.push(...b.latencies);
    }
    if (tracing) {
      for (const side of ['service', 'bare'] as const) {
        // Every job of the side, inside the windows or not, began and ended within its rounds.
        const perRun = Object.entries(cpu[side]).map(([name, ms]) => `${name} ${fmt(ms / traced[side].length)}`);
        console.log(`trace cpu 8 (${side}, per run, ${traced[side].length} runs): ${perRun.join(', ')}`);
      }
      await traceLoadPhases(ctx.client, traced);
    }
  } finally {
    await stopBare();
    await deleteAgents(ctx, agents);
  }
  const seconds = (ROUNDS * SUSTAINED_WINDOW_MS) / 1000;
  const serviceRate = service.completed / seconds;
  const bareRate = bare.completed / seconds;
  line(
    `8. 100 agents, sustained webhooks, runs completed per second (${SUSTAINED_IN_FLIGHT} in flight) vs bare workflows`,
    {
      service_runs_per_s: serviceRate.toFixed(1),
      bare_runs_per_s: bareRate.toFixed(1),
      ratio: (serviceRate / bareRate).toFixed(3),
      goal: '≥0.8×',
      verdict: verdict(serviceRate / bareRate >= 0.8),
      service_p50: fmt(percentile(service.latencies, 50)),
      bare_p50: fmt(percentile(bare.latencies, 50)),
      window: `${ROUNDS}×${SUSTAINED_WINDOW_MS / 1000} s per side`,
      worker_cpu_per_run: fmt(worker.cpuMs / traced.service.length),
    },
  );
  return {
    runsPerSecond: serviceRate,
    workerCpuPerSecond: worker.cpuMs / worker.wallMs,
    workerCpuMsPerRun: worker.cpuMs / traced.service.length,
  };
}

/**
 * BENCH_TRACE for benchmark 8: the medians of each phase (history-phases.ts) over the last 150 jobs of
 * each side, in ms.
 */
async function traceLoadPhases(
  client: Client,
  traced: { service: Array<[string, number, number]>; bare: Array<[string, number, number]> },
): Promise<void> {
  const histories = new Map<string, Awaited<ReturnType<typeof historiesOf>>>();
  for (const [name, jobs] of Object.entries(traced)) {
    const rows: Array<Record<Phase, number>> = [];
    for (const [workflowId, from, to] of jobs.slice(-150)) {
      if (!histories.has(workflowId)) {
        histories.set(workflowId, await historiesOf(client, workflowId));
      }
      const phases = runPhases(histories.get(workflowId)!, from, to);
      if (phases !== undefined) {
        rows.push(phases);
      }
    }
    const medians = medianPhases(rows);
    console.log(
      `trace phases 8 (${name}, medians of ${rows.length}): ` +
        Object.entries(medians)
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(', '),
    );
  }
}

/** CPU time (ms) the process has used so far, user and system, from /proc/<pid>/stat. */
/** CPU time (user + system) a process has used, in ms, from /proc. */
export function cpuMs(pid: number, ticksPerSecond: number, withChildren = false): number {
  // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th, the
  // time of the children it waited for (cutime, cstime) the 14th and 15th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = [11, 12, ...(withChildren ? [13, 14] : [])].reduce((sum, i) => sum + Number(fields[i]), 0);
  return (ticks * 1000) / ticksPerSecond;
}

/**
 * The CPU time (ms) used so far by a process and every process below it (their live children's own
 * time, and the time of the children each has waited for: PostgreSQL's postmaster reaps its exited
 * backends). Only this process tree: other stacks on the machine (a test run, another bench) are not
 * counted.
 */
export function treeCpu(rootPid: number, ticks: number): number {
  let total = 0;
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    try {
      total += cpuMs(pid, ticks, true);
    } catch {
      continue; // gone since it was listed
    }
    try {
      pending.push(
        ...execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .filter(Boolean)
          .map(Number),
      );
    } catch {
      // pgrep exits 1 when the process has no children
    }
  }
  return total;
}

/** The pid of the PostgreSQL server whose data directory is `dir` (its postmaster.pid's first line). */
export function postmasterPid(dir: string): number {
  return Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/**
 * The CPU time (ms) the stack's processes have used so far (goal 7's CPU per run, and BENCH_TRACE): the
 * Temporal server (the dev server or compose's), PostgreSQL (the postmaster and its backends, with those
 * that have exited), the API, the worker, and this process (the bare side's worker, the fake model, the
 * site).
 */
export function stackCpu(ctx: Pick<ScaleContext, 'stack' | 'pids'>, ticks: number): Record<string, number> {
  return {
    temporal: treeCpu(ctx.pids.temporal, ticks),
    postgres: treeCpu(ctx.pids.postgres, ticks),
    api: cpuMs(ctx.stack.api.child.pid!, ticks),
    worker: cpuMs(ctx.stack.worker!.child.pid!, ticks),
    bench: cpuMs(process.pid, ticks),
  };
}

export function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/**
 * 9. 100 chat turns streaming at once (one session each for 100 users), time to the first text event and the API
 * process's CPU per turn, vs 100 streamed requests at once straight to the fake model, and vs the
 * floor: 100 at once to the minimal Nest app streaming the same request through the Anthropic SDK
 * (adapters.ts), with its process's CPU per turn. Alternating rounds after one warm-up round each.
 */
export async function concurrentChat(ctx: ScaleContext): Promise<void> {
  const N9 = 100;
  const ROUNDS = 3;
  // One chat each for 100 users, as 100 people chatting at once would be: one user's turns would wait
  // on each other (the user's slots, MAX_CONCURRENT_CHAT_TURNS, and the lock of its credit hold).
  const owners: BenchUser[] = [];
  const sessions: string[] = [];
  await load(N9, 8, async (i) => {
    const owner = await benchUser(ctx, 'harness', true);
    const res = await ctx.api.post(
      '/api/sessions',
      { sites: [{ siteId: owner.siteId, tools: ['search_notes'] }] },
      { token: owner.token },
    );
    owners[i] = owner;
    sessions[i] = `${ctx.stack.baseUrl}/api/sessions/${res.body.token as string}/messages`;
  });
  ctx.model.fallback = { text: 'Hello from the model, streamed in pieces.' };
  const apiPid = ctx.stack.api.child.pid!;
  const floor = ctx.floor!;
  const ticks = clockTicks();
  // What the service sent the model in the last chat round, turn by turn: the floor and the model
  // directly are sent the same requests (system prompt, the session's tool, its messages so far).
  let sent = new Map<string, RecordedRequest['body']>();
  const sentFor = (round: number, i: number): RecordedRequest['body'] => {
    const body = sent.get(`hi ${round} ${i}`);
    if (body === undefined) {
      throw new Error(`the service's request to the model for turn ${round} ${i} was not recorded`);
    }
    return body;
  };
  const chatRound = async (round: number): Promise<number[]> => {
    const from = ctx.model.requests.length;
    const times = await Promise.all(
      sessions.map((url, i) => firstText(url, { content: `hi ${round} ${i}` }, owners[i]!.auth, wide)),
    );
    sent = serviceRequests(ctx.model, from);
    return times;
  };
  // Untimed, and outside the API's CPU reading: the floor app keeps each request until its turn names it.
  const prepareRound = async (round: number): Promise<void> => {
    await load(N9, 8, (i) => prepareFloor(floor.url, `9-${round}-${i}`, sentFor(round, i)));
  };
  const floorRound = (round: number): Promise<number[]> =>
    Promise.all(
      sessions.map((_url, i) =>
        firstText(`${floor.url}/api/chat`, { prepared: `9-${round}-${i}` }, { authorization: 'Bearer x' }, wide),
      ),
    );
  const modelRound = (round: number): Promise<number[]> =>
    Promise.all(sessions.map((_url, i) => firstText(`${ctx.model.url}/v1/messages`, sentFor(round, i), {}, wide)));
  await chatRound(-1);
  await prepareRound(-1);
  await floorRound(-1);
  await modelRound(-1);
  const chat: number[] = [];
  const minimal: number[] = [];
  const direct: number[] = [];
  let apiCpu = 0;
  let floorCpu = 0;
  let benchCpu = 0;
  // The timed rounds' span on the monotonic clock (µs): a CPU profile of the API cut to it
  // (`profile-summary --between`) holds the turns alone.
  const clock = (): string => String(process.hrtime.bigint() / 1000n);
  const timedFrom = clock();
  for (let round = 0; round < ROUNDS; round += 1) {
    let before = cpuMs(apiPid, ticks);
    chat.push(...(await chatRound(round)));
    apiCpu += cpuMs(apiPid, ticks) - before;
    await prepareRound(round);
    before = cpuMs(floor.pid, ticks);
    minimal.push(...(await floorRound(round)));
    floorCpu += cpuMs(floor.pid, ticks) - before;
    const usage = process.cpuUsage();
    direct.push(...(await modelRound(round)));
    const used = process.cpuUsage(usage);
    benchCpu += (used.user + used.system) / 1000;
  }
  if (process.env.BENCH_TRACE === '1') {
    console.log(`[bench] 9: timed rounds between ${timedFrom} and ${clock()} (µs, monotonic)`);
  }
  line('9. 100 chat turns streaming at once: first text event vs 100 at once to the fake model', {
    chat_p50: fmt(percentile(chat, 50)),
    chat_p99: fmt(percentile(chat, 99)),
    model_p50: fmt(percentile(direct, 50)),
    model_p99: fmt(percentile(direct, 99)),
    added_p99: fmt(percentile(chat, 99) - percentile(direct, 99)),
    goal: "CPU per turn ≤1.3× the floor's, first-text p99 ≤ the floor's +50 ms",
    verdict: verdict(apiCpu <= 1.3 * floorCpu && percentile(chat, 99) <= percentile(minimal, 99) + 50),
    api_cpu_per_turn: fmt(apiCpu / (ROUNDS * N9)),
    // The baseline has no API process: this is the bench's own (client and fake model) per request.
    direct_cpu_per_request: fmt(benchCpu / (ROUNDS * N9)),
    // The floor: the minimal app on Fastify streaming the same request through the Anthropic SDK.
    minimal_app_p99: fmt(percentile(minimal, 99)),
    floor_added_p99: fmt(percentile(minimal, 99) - percentile(direct, 99)),
    minimal_app_cpu_per_turn: fmt(floorCpu / (ROUNDS * N9)),
  });
}
