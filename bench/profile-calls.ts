/**
 * `node dist/bench/profile-calls.js [me] [tool] [chat]`: the request paths of benchmarks 6 (GET /api/me,
 * 16 at once), 3 (a direct tool call) and 4 (a chat turn's first text, these two one at a time)
 * against the API, in alternating rounds with
 * the floor (the minimal Nest app doing the same call, adapters.ts) and, with
 * BENCH_COMPARE_DISTS=`<name>=<dist dir>,…`, with more API processes built from other commits (their
 * `dist` directories) on the same PostgreSQL, Temporal, site and model: each change's before/after
 * figure measured side by side in one run. Prints each side's p50 and the CPU time a call costs its
 * process (/proc, over the side's own rounds). Compare the compared builds with each other: the
 * stack's own API (`api`, which also served the setup) cost 0.4–0.8 ms more CPU a tool call than the
 * same build started as a compared one, in the runs of 2026-11-27. A compared build's directory needs
 * `node_modules` beside it (a link) and the `package.json`.
 *
 * Profiles: AGENTSITE_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>" starts every API process (this
 * stack's, and the compared ones) with V8's sampling profiler; each writes its .cpuprofile when it
 * exits, and `node dist/bench/profile-summary.js <file> --between <from> <to>` sums its self time by
 * module over a phase's measured rounds (the driver prints both readings of the monotonic clock).
 *
 * BENCH_PROFILE_ROUNDS (default 6) rounds of BENCH_PROFILE_CALLS (default 100) tool calls and of
 * BENCH_PROFILE_TURNS (default 20) chat turns per side. No worker is started: neither route needs one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { freePort, stopChild, waitFor } from '../scripts/runtime/processes.js';
import { Http } from '../test/utils/http.js';
import { siteEnv } from '../test/utils/site.js';
import { Stack } from '../test/utils/stack.js';
import { firstText, get, post, prepareFloor, serviceRequests } from './client.js';
import { startServer } from './children.js';
import { benchUser, startBackends } from './environment.js';
import { clockTicks, cpuMs } from './scale.js';
import { fmt, load, percentile } from './stats.js';

const wanted = new Set(process.argv.slice(2));
const want = (kind: 'me' | 'tool' | 'chat'): boolean => wanted.size === 0 || wanted.has(kind);
const ROUNDS = Number(process.env.BENCH_PROFILE_ROUNDS ?? 6);
const CALLS = Number(process.env.BENCH_PROFILE_CALLS ?? 100);
const TURNS = Number(process.env.BENCH_PROFILE_TURNS ?? 20);
const nodeArgs = (process.env.AGENTSITE_NODE_ARGS ?? '').split(' ').filter(Boolean);

interface Side {
  name: string;
  pid: number;
  /** One timed request (ms); `i` numbers the side's requests. */
  run: (i: number) => Promise<number>;
  samples: number[];
  cpu: number;
  calls: number;
}

/** Another API from another build (its dist directory), with the stack's settings. */
async function startBuild(stack: Stack, name: string, distDir: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, path.join(distDir, 'src/main.js')], {
    env: { ...stack.env, PORT: String(port), PUBLIC_BASE_URL: url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = createWriteStream(path.join(stack.dir, `api-${name}-${Date.now()}.log`));
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  await waitFor(
    `the ${name} API`,
    async () => (await fetch(`${url}/api/health/ready`).catch(() => null)) !== null,
    60_000,
  );
  return { child, url };
}

function startFloor(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return startServer('fastify', env);
}

/** Alternating rounds of every side, each side's CPU counted over its own rounds only. */
async function measure(title: string, sides: Side[], perRound: number, warmup: number, concurrency = 1): Promise<void> {
  const ticks = clockTicks();
  for (const side of sides) {
    await load(warmup, concurrency, async (i) => void (await side.run(-1 - i)));
  }
  // The monotonic clock in µs (V8's profiles use the same): profile-summary --between <from> <to>.
  const clock = (): string => String(process.hrtime.bigint() / 1000n);
  const from = clock();
  let n = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const before = cpuMs(side.pid, ticks);
      await load(perRound, concurrency, async () => void side.samples.push(await side.run(n++)));
      side.cpu += cpuMs(side.pid, ticks) - before;
      side.calls += perRound;
    }
  }
  console.log(`[profile] ${title}: measured between ${from} ${clock()} (profile-summary --between)`);
  const floor = sides.find((s) => s.name === 'floor');
  for (const side of sides) {
    const p50 = percentile(side.samples, 50);
    const over =
      floor === undefined || side === floor ? '' : `  over the floor ${fmt(p50 - percentile(floor.samples, 50))}`;
    console.log(
      `${title} ${side.name}: p50 ${fmt(p50)}  p90 ${fmt(percentile(side.samples, 90))}  ` +
        `cpu/call ${fmt(side.cpu / side.calls)}${over}`,
    );
  }
}

async function main(): Promise<void> {
  const log = (l: string): void => console.log(`[profile] ${l}`);
  const backends = await startBackends('profile', log);
  const { sites, site, model } = backends;
  model.fallback = { text: 'Hello from the model, streamed in pieces.' };
  const stack = await Stack.start({
    worker: false,
    env: {
      ...siteEnv(sites, [site]),
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: model.url,
      OUTGOING_CALLS_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
    },
  });
  const compared: Array<{ name: string; child: ChildProcess; url: string }> = [];
  for (const entry of (process.env.BENCH_COMPARE_DISTS ?? '').split(',').filter(Boolean)) {
    const [name, dist] = entry.split('=') as [string, string];
    compared.push({ name, ...(await startBuild(stack, name, dist)) });
  }
  const api = new Http(stack.baseUrl);
  const { user, siteId, apiToken, auth } = await benchUser(api, stack, site);
  const floor = await startFloor({
    BENCH_SITE_TOOL_URL: `${site.url}/api/tools/search_notes`,
    BENCH_SITE_TOKEN: apiToken,
    BENCH_SITE_CA: sites.ca.cert,
    BENCH_MODEL_URL: model.url,
  });
  const apis = [
    { name: 'api', url: stack.baseUrl, pid: stack.api.child.pid! },
    ...compared.map((c) => ({ name: c.name, url: c.url, pid: c.child.pid! })),
  ];
  console.log(`[profile] pids: ${apis.map((a) => `${a.name} ${a.pid}`).join(', ')}, floor ${floor.child.pid}`);
  const side = (name: string, pid: number, run: (i: number) => Promise<number>): Side => ({
    name,
    pid,
    run,
    samples: [],
    cpu: 0,
    calls: 0,
  });
  const timedPost = async (url: string, body: unknown, headers: Record<string, string>): Promise<number> => {
    const t = performance.now();
    const res = await post(url, body, headers);
    if (res.status !== 200) {
      throw new Error(`${url} answered ${res.status} ${res.text}`);
    }
    return performance.now() - t;
  };
  try {
    if (want('me')) {
      // Benchmark 6's request: the authenticated trivial route, 16 at once.
      const timedGet = async (url: string, headers: Record<string, string>): Promise<number> => {
        const t = performance.now();
        const status = await get(url, headers);
        if (status !== 200) {
          throw new Error(`${url} answered ${status}`);
        }
        return performance.now() - t;
      };
      await measure(
        '6. GET /api/me',
        [
          ...apis.map((a) => side(a.name, a.pid, () => timedGet(`${a.url}/api/me`, auth))),
          side('floor', floor.child.pid!, () => timedGet(`${floor.url}/api/me`, { authorization: 'Bearer x' })),
        ],
        CALLS * 5,
        300,
        16,
      );
    }
    if (want('tool')) {
      const body = { input: { query: 'x' } };
      await measure(
        '3. tool call',
        [
          ...apis.map((a) =>
            side(a.name, a.pid, () =>
              timedPost(`${a.url}/api/vault/sites/${siteId}/tools/search_notes/call`, body, auth),
            ),
          ),
          side('floor', floor.child.pid!, () =>
            timedPost(`${floor.url}/api/tool`, body, { authorization: 'Bearer x' }),
          ),
        ],
        CALLS,
        50,
      );
    }
    if (want('chat')) {
      const sessions = new Map<string, string>();
      for (const a of apis) {
        const created = await api.post(
          '/api/sessions',
          { sites: [{ siteId, tools: ['search_notes'] }] },
          { token: user.token },
        );
        sessions.set(a.name, created.body.token as string);
      }
      // The floor sends the model the request the (first) API sent it for the same turn, as benchmark 4.
      let lastSent: Parameters<typeof prepareFloor>[2] | undefined;
      await measure(
        '4. chat first text',
        [
          ...apis.map((a) =>
            side(a.name, a.pid, async (i) => {
              const from = model.requests.length;
              const content = `${a.name} ${i}`;
              const ms = await firstText(`${a.url}/api/sessions/${sessions.get(a.name)}/messages`, { content }, auth);
              if (a.name === 'api') {
                lastSent = serviceRequests(model, from).get(content);
              }
              return ms;
            }),
          ),
          side('floor', floor.child.pid!, async (i) => {
            await prepareFloor(floor.url, `f${i}`, lastSent!);
            return firstText(`${floor.url}/api/chat`, { prepared: `f${i}` }, { authorization: 'Bearer x' });
          }),
        ],
        TURNS,
        10,
      );
    }
  } finally {
    floor.child.kill();
    // SIGTERM: the APIs shut down and write their profiles.
    await Promise.all([stack.stop(), ...compared.map((c) => stopChild(c.child))]);
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
