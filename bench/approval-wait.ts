/**
 * Benchmark 5, second figure (issue 39): worker memory per run waiting for approval. N agents with an
 * approval policy each start one run whose first model turn asks for a write; every run then waits,
 * its agent's queue held in the worker's workflow cache with the wait's durable timer. The worker's
 * RSS and V8 heap used (from its /metrics, WORKER_HTTP_PORT) are read, settled, before and after each
 * of two batches of N; the second batch's difference per run is the figure (the first also pays for
 * the worker's one-off growth). The worker cannot be asked to collect its garbage, so
 * the heap figure is the least of several readings a few hundred milliseconds apart (a collection
 * happens between them under the idle worker's timers). The runs are cancelled and the agents deleted after.
 */
import { readFileSync } from 'node:fs';
import type { FakeModel, RecordedRequest } from '../test/fixtures/fake-model.js';
import { toolNamed } from '../test/fixtures/fake-model.js';
import type { Http } from '../test/utils/http.js';
import type { Stack } from '../test/utils/stack.js';
import { registerUserWith } from '../test/utils/users.js';
import { line, load, verdict } from './stats.js';

export interface ApprovalWaitContext {
  api: Http;
  stack: Stack;
  adminToken: string;
  model: FakeModel;
  site: { url: string; apiToken: string };
}

/** Runs per batch; two batches, so the second's cost is without the worker's one-off growth. */
const N = 200;
const BATCHES = 2;
/** The team tier's agent limit: one user per batch of 200 agents. */
const PER_USER = 200;

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** The worker's V8 heap used (KB), from its metrics. */
async function heapUsedKb(stack: Stack): Promise<number> {
  const text = await (
    await fetch(`${stack.workerHttpUrl}/metrics`, { headers: { authorization: `Bearer ${stack.env.METRICS_TOKEN}` } })
  ).text();
  const found = /^nodejs_heap_size_used_bytes\s+(\S+)/m.exec(text);
  if (found === null) {
    throw new Error('the worker metrics have no nodejs_heap_size_used_bytes');
  }
  return Number(found[1]) / 1024;
}

/** RSS and heap used of the idle worker: RSS after 3 s of quiet, the least heap of 10 readings. */
async function settled(stack: Stack): Promise<{ rss: number; heap: number }> {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  let heap = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 10; i += 1) {
    heap = Math.min(heap, await heapUsedKb(stack));
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return { rss: rssKb(stack.worker!.child.pid!), heap };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Owner {
  token: string;
  siteId: string;
}

/** A team user with the site in their vault, credits for every run. */
async function teamOwner(ctx: ApprovalWaitContext): Promise<Owner> {
  const user = await registerUserWith(ctx.api, { token: ctx.adminToken }, { tier: 'team', credits: 100_000_000 });
  const siteId = (await ctx.api.post('/api/vault/sites', { url: ctx.site.url }, { token: user.token })).body.id;
  await ctx.api.post(`/api/vault/sites/${siteId}/token`, { token: ctx.site.apiToken }, { token: user.token });
  return { token: user.token, siteId };
}

/** Waits (up to 5 min) until `owner` has `n` approvals pending; answers how many are. */
async function pendingOf(ctx: ApprovalWaitContext, owner: Owner, n: number): Promise<number> {
  const by = Date.now() + 300_000;
  let waiting = 0;
  while (Date.now() < by) {
    const page = await ctx.api.get(`/api/approvals?status=pending&limit=${PER_USER}`, { token: owner.token });
    waiting = (page.body.items as unknown[]).length;
    if (waiting >= n) {
      break;
    }
    await sleep(1000);
  }
  return waiting;
}

/**
 * Two batches of N waiting runs, measured as the idle-queue figure is: the first batch pays for what
 * the worker sets up once (code compiled on first use, the heap and RSS grown for a burst), the second
 * is what each further waiting run costs: the figure per run.
 */
export async function waitingRunsMemory(ctx: ApprovalWaitContext): Promise<void> {
  const owners: Owner[] = [];
  for (let u = 0; u < Math.ceil((N * BATCHES) / PER_USER); u += 1) {
    owners.push(await teamOwner(ctx));
  }
  const agents: Array<{ id: string; token: string }> = [];
  await load(N * BATCHES, 8, async (i) => {
    const owner = owners[Math.floor(i / PER_USER)]!;
    const res = await ctx.api.post(
      '/api/agents',
      {
        name: `waits ${i}`,
        systemPrompt: 'p',
        siteIds: [owner.siteId],
        trigger: { type: 'manual' },
        approvals: { scopes: ['write'] },
      },
      { token: owner.token },
    );
    if (res.status !== 201) {
      throw new Error(`creating an agent answered ${res.status} ${res.text}`);
    }
    agents[i] = { id: res.body.id, token: owner.token };
  });
  const fallback = ctx.model.fallback;
  // Every run's first turn asks for a write, which waits; nothing answers it during the measure.
  ctx.model.fallback = (req: RecordedRequest) => ({
    toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'waits', body: 'for a person' } }],
  });
  const runs: Array<{ id: string; token: string }> = [];
  /** Starts batch `b`'s N runs and waits until they all wait; answers how many do. */
  const batch = async (b: number): Promise<number> => {
    await load(N, 8, async (i) => {
      const agent = agents[b * N + i]!;
      const res = await ctx.api.post(`/api/agents/${agent.id}/runs`, {}, { token: agent.token });
      if (res.status !== 201) {
        throw new Error(`starting a run answered ${res.status} ${res.text}`);
      }
      runs.push({ id: res.body.id, token: agent.token });
    });
    let waiting = 0;
    for (const owner of owners.slice((b * N) / PER_USER, ((b + 1) * N) / PER_USER)) {
      waiting += await pendingOf(ctx, owner, Math.min(N, PER_USER));
    }
    return waiting;
  };
  try {
    const before = await settled(ctx.stack);
    const waitingFirst = await batch(0);
    const afterFirst = await settled(ctx.stack);
    const waitingNext = await batch(1);
    const afterNext = await settled(ctx.stack);
    const kb = (n: number): string => `${n.toFixed(1)} KB`;
    line(`5. worker memory per run waiting for approval (two batches of ${N} runs, one per agent)`, {
      goal: '≤150 KB per run',
      verdict: verdict((afterNext.rss - afterFirst.rss) / N <= 150 && (afterNext.heap - afterFirst.heap) / N <= 150),
      waiting: `${waitingFirst + waitingNext}/${N * BATCHES}`,
      rss_before: `${(before.rss / 1024).toFixed(1)} MB`,
      rss_first_batch: kb((afterFirst.rss - before.rss) / N),
      // The goal's figures: what each further waiting run adds once the worker is set up.
      rss_per_run: kb((afterNext.rss - afterFirst.rss) / N),
      heap_before: `${(before.heap / 1024).toFixed(1)} MB`,
      heap_first_batch: kb((afterFirst.heap - before.heap) / N),
      heap_used_per_run: kb((afterNext.heap - afterFirst.heap) / N),
    });
  } finally {
    ctx.model.fallback = fallback;
    await load(runs.length, 8, async (i) => {
      await ctx.api.post(`/api/runs/${runs[i]!.id}/cancel`, undefined, { token: runs[i]!.token });
    });
    await load(agents.length, 8, async (i) => {
      await ctx.api.delete(`/api/agents/${agents[i]!.id}`, { token: agents[i]!.token });
    });
  }
}
