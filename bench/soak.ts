/**
 * `npm run bench:soak [-- --minutes N]` (30 by default): the service under a steady load for N minutes
 * while its processes are killed, then what was lost, duplicated or kept growing.
 *
 * Starts its own PostgreSQL, Temporal dev server (SQLite file, as `npm start`), reference site, fake
 * model, and the service as two API and two worker processes (test/utils/cluster.ts). The load
 * (soak-load.ts): a webhook and a direct tool call every 2 s, a manual run and a chat turn every 4 s,
 * sent round robin to the APIs that are up; each asks for one note at the site titled with its own
 * marker. Every `kill interval` (3 minutes, or a quarter of a shorter run) the second worker or the
 * second API, alternately, is SIGKILLed and started again; the first API and worker are never killed,
 * and their memory is what is measured. At the end it waits (at most 5 minutes) for the accepted runs
 * to end, then prints each figure with its goal.
 */
import pg from 'pg';
import { answerHelp } from '../scripts/runtime/command-line.js';
import { Cluster } from '../test/utils/cluster.js';
import { Http } from '../test/utils/http.js';
import { siteEnv } from '../test/utils/site.js';
import { countEffects, Load, scriptModel, type Kind } from './soak-load.js';
import { growth, mib, rssMiB, runStatuses, tableSizes } from './soak-measure.js';
import { benchUser, startBackends } from './environment.js';
import { line, percentile } from './stats.js';
import { Killer } from './soak-kill.js';

const USAGE = `usage: npm run bench:soak [-- --minutes N]   (node dist/bench/soak.js [--minutes N])
The service (2 APIs, 2 workers) under a steady load of webhooks, manual runs, chat turns and tool calls
for N minutes (default 30, at most 240), one worker or API SIGKILLed and restarted every 3 minutes;
prints accepted vs completed runs, lost and duplicated tool effects, table growth and memory.`;

function minutesArg(argv: string[]): number {
  const at = argv.indexOf('--minutes');
  const minutes = at === -1 ? 30 : Number(argv[at + 1]);
  if (!Number.isFinite(minutes) || minutes < 1 || minutes > 240) {
    throw new Error(`--minutes must be a number from 1 to 240\n${USAGE}`);
  }
  return minutes;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** How long the accepted runs may take to end after the load stops. */
const DRAIN_MS = 5 * 60_000;
/** Each kind's period, in ms. */
const PERIODS: Record<Kind, number> = { webhook: 2_000, call: 2_000, manual: 4_000, chat: 4_000 };

async function main(): Promise<void> {
  answerHelp(USAGE);
  const minutes = minutesArg(process.argv.slice(2));
  const durationMs = minutes * 60_000;
  const killEveryMs = Math.min(180_000, durationMs / 4);
  // Memory: the median of the samples in a window after the warm-up, against the last window's.
  const warmUpMs = Math.max(60_000, durationMs / 10);
  const windowMs = Math.max(30_000, durationMs / 10);
  const log = (l: string): void => console.log(`[soak] ${l}`);
  const backends = await startBackends('soak', log);
  const { postgres, temporal, sites, site, model } = backends;
  scriptModel(model);
  const db = new pg.Pool({ connectionString: postgres.url, max: 4 });
  const cluster = await Cluster.start({
    apis: 2,
    workers: 2,
    env: {
      ...siteEnv(sites, [site]),
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: model.url,
      OUTGOING_CALLS_PER_MINUTE: '1000000',
    },
  });
  const killer = new Killer(cluster, log);
  // Interrupted (Ctrl-C), the service's processes and Temporal go too: none is left running.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const handle of [...cluster.apis.map((a) => a.process), ...cluster.workers]) {
        handle.child.kill('SIGKILL');
      }
      temporal.process.kill('SIGKILL');
      void postgres.stop().finally(() => process.exit(130));
    });
  }
  try {
    const api = new Http(cluster.stack.baseUrl);
    const { user, siteId } = await benchUser(api, cluster.stack, site);
    const agent = async (name: string, trigger: Record<string, unknown>) => {
      const res = await api.post(
        '/api/agents',
        { name, systemPrompt: 'Write down the task as a note.', siteIds: [siteId], trigger },
        { token: user.token },
      );
      if (res.status !== 201) {
        throw new Error(`creating an agent answered ${res.status} ${JSON.stringify(res.body)}`);
      }
      return res.body as { id: string; webhookSecret: string };
    };
    const webhookAgents = [];
    const manualAgents: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      webhookAgents.push(await agent(`hook ${i}`, { type: 'webhook', schema: [] }));
      manualAgents.push((await agent(`manual ${i}`, { type: 'manual' })).id);
    }
    const load = new Load({
      targets: { next: () => killer.nextApi() },
      userAuth: { authorization: `Bearer ${user.token}` },
      siteId,
      webhookAgents,
      manualAgents,
      agentBusy: async (agentId) =>
        (await db.query("SELECT 1 FROM runs WHERE agent_id = $1 AND status IN ('queued', 'active') LIMIT 1", [agentId]))
          .rowCount !== 0,
      newSession: async () => {
        const res = await api.post(
          '/api/sessions',
          { sites: [{ siteId, tools: ['create_note'] }] },
          { token: user.token },
        );
        return res.body.token as string;
      },
    });

    const tablesAtStart = await tableSizes(db);
    log(
      `load for ${minutes} min: ${Object.entries(PERIODS)
        .map(([kind, ms]) => `${kind} every ${ms / 1000} s`)
        .join(', ')}; a worker or an API SIGKILLed every ${Math.round(killEveryMs / 1000)} s`,
    );
    const started = Date.now();
    const jobs: Array<Promise<void>> = [];
    const timers = (Object.entries(PERIODS) as Array<[Kind, number]>).map(([kind, ms]) =>
      setInterval(() => jobs.push(load[kind]().catch((err: unknown) => log(`${kind} failed: ${String(err)}`))), ms),
    );
    const survivors = { api: cluster.apis[0]!.process.child.pid!, worker: cluster.workers[0]!.child.pid! };
    const samples: Array<{ at: number; api: number; worker: number }> = [];
    const sampler = setInterval(
      () => samples.push({ at: Date.now() - started, api: rssMiB(survivors.api), worker: rssMiB(survivors.worker) }),
      5_000,
    );
    let kills = 0;
    while (Date.now() - started < durationMs) {
      const nextKill = (kills + 1) * killEveryMs;
      const end = Math.min(nextKill, durationMs);
      await sleep(Math.max(0, end - (Date.now() - started)));
      if (end === nextKill && nextKill < durationMs) {
        await (kills % 2 === 0 ? killer.killWorker() : killer.killApi());
        kills += 1;
      }
    }
    for (const timer of timers) {
      clearInterval(timer);
    }
    clearInterval(sampler);
    await Promise.all(jobs);
    await killer.settled();

    // The tail: every accepted run ends (bounded).
    const runIds = load.ledger.flatMap((e) => (e.runId !== undefined ? [e.runId] : []));
    const drainStart = Date.now();
    let statuses = await runStatuses(db, runIds);
    while (
      (statuses.queued ?? 0) + (statuses.active ?? 0) + statuses.missing! > 0 &&
      Date.now() - drainStart < DRAIN_MS
    ) {
      await sleep(2_000);
      statuses = await runStatuses(db, runIds);
    }
    const drainS = Math.round((Date.now() - drainStart) / 1000);
    // Rows of runs whose start was not answered count too: a row left queued blocks its agent.
    const { rows: unended } = await db.query<{ id: string; input: string | null; status: string }>(
      "SELECT id, input, status FROM runs WHERE status IN ('queued', 'active')",
    );
    const tablesAtEnd = await tableSizes(db);
    const effects = countEffects(site, load.ledger);

    console.log(
      `\nagentsite soak (${minutes} min, 2 APIs + 2 workers, ${kills} SIGKILLs; on a machine shared with other work)`,
    );
    const byKind = (kind: Kind) => {
      const of = load.ledger.filter((e) => e.kind === kind);
      return `${of.filter((e) => e.outcome === 'accepted').length}/${of.filter((e) => e.outcome === 'refused').length}/${of.filter((e) => e.outcome === 'unanswered').length}`;
    };
    line('requests (accepted/refused/unanswered)', {
      webhooks: byKind('webhook'),
      manual_runs: byKind('manual'),
      chat_turns: byKind('chat'),
      tool_calls: byKind('call'),
      skipped_busy: load.skipped,
    });
    for (const refused of load.ledger.filter((e) => e.outcome !== 'accepted').slice(0, 10)) {
      log(`not accepted: ${refused.kind} ${refused.marker} ${refused.outcome} ${refused.detail ?? ''}`);
    }
    line('runs accepted vs completed', {
      goal: 'equal',
      accepted: runIds.length,
      completed: statuses.completed ?? 0,
      failed: statuses.failed ?? 0,
      cancelled: statuses.cancelled ?? 0,
      not_ended: (statuses.queued ?? 0) + (statuses.active ?? 0),
      no_row: statuses.missing!,
      tail_drained_in: `${drainS} s`,
    });
    line('run rows left queued or active (any request, answered or not)', {
      goal: '0',
      rows: unended.length,
      manual_agents_set_aside: load.stuckAgents.length,
    });
    for (const row of unended.slice(0, 10)) {
      const entry = load.ledger.find((e) => e.runId === row.id || e.marker === row.input);
      log(
        `left ${row.status}: run ${row.id} (${entry?.kind ?? 'webhook'} ${entry?.marker ?? ''}: ${entry?.outcome ?? '?'})`,
      );
    }
    line('tool effects at the site (by marker, each idempotency-keyed)', {
      goal: '0 lost, 0 duplicated',
      lost: effects.lost.length,
      duplicated: effects.duplicated.length,
      unanswered_but_done: effects.unansweredButDone,
      site_effects: site.stats.effects,
    });
    for (const entry of [...effects.lost, ...effects.duplicated].slice(0, 10)) {
      log(`effect: ${JSON.stringify(entry)}`);
    }
    const completed = Math.max(1, statuses.completed ?? 0);
    const grown = growth(tablesAtStart, tablesAtEnd);
    const largest = grown[0]!;
    line('largest table growth per 1,000 completed runs', {
      goal: 'reported (run retention bounds it)',
      table: largest.table,
      rows: Math.round((largest.rows / completed) * 1000),
      bytes: mib((largest.bytes / completed) * 1000),
      next: grown
        .slice(1, 4)
        .map((g) => `${g.table} ${mib((g.bytes / completed) * 1000)}`)
        .join(', '),
    });
    const median = (from: number, to: number, key: 'api' | 'worker'): number =>
      percentile(
        samples.filter((s) => s.at >= from && s.at <= to).map((s) => s[key]),
        50,
      );
    const last = samples.at(-1)?.at ?? durationMs;
    // A run shorter than the warm-up and two windows has no RSS to compare (1 minute: the warm-up alone).
    if (last - windowMs < warmUpMs + windowMs) {
      line('RSS (the never-killed API and worker)', {
        goal: 'flat within 10 %',
        verdict: `not measured: the run (${Math.round(last / 1000)} s) is shorter than the warm-up and two ${Math.round(windowMs / 1000)} s windows (${Math.round((warmUpMs + 2 * windowMs) / 1000)} s)`,
      });
      return;
    }
    for (const key of ['api', 'worker'] as const) {
      const first = median(warmUpMs, warmUpMs + windowMs, key);
      const end = median(last - windowMs, last, key);
      line(`${key} RSS (the never-killed ${key}, medians of 5 s samples)`, {
        goal: 'flat within 10 %',
        after_warm_up: `${first.toFixed(1)} MiB`,
        at_end: `${end.toFixed(1)} MiB`,
        change: `${(((end - first) / first) * 100).toFixed(1)} %`,
        windows: `${Math.round(warmUpMs / 1000)}-${Math.round((warmUpMs + windowMs) / 1000)} s vs the last ${Math.round(windowMs / 1000)} s`,
      });
    }
  } finally {
    await killer.settled().catch(() => undefined);
    await cluster.stop();
    await db.end();
    await backends.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
