/**
 * Benchmark 5, second figure (issue 39): worker memory per run waiting for approval. N agents with an
 * approval policy each start one run whose first model turn asks for a write; every run then waits,
 * its agent's queue held in the worker's workflow cache with the wait's durable timer. The worker's
 * RSS and V8 heap used (its main isolate's and its workflow thread's) are read after a full garbage
 * collection (through the worker's inspector, collect-garbage.ts) before and after each of two batches
 * of N; the second batch's difference per run is the figure (the first also pays for the worker's
 * one-off growth). The runs are cancelled and the agents deleted after. The floor, measured the same
 * way: a bare worker in a process of its own holding N bare waiting runs a batch (bareWaitingWorkflow:
 * a model turn asking for a call, the request recorded, a durable wait for an Update).
 */
import type { Client } from '@temporalio/client';
import type { FakeModel, RecordedRequest } from '../test/fixtures/fake-model.js';
import { toolNamed } from '../test/fixtures/fake-model.js';
import type { Http } from '../test/utils/http.js';
import type { Stack } from '../test/utils/stack.js';
import { registerUserWith } from '../test/utils/users.js';
import type { bareWaitingWorkflow } from './bare.workflow.js';
import { startChild } from './children.js';
import { inspectorPort, memoryAfterCollection } from './collect-garbage.js';
import { line, load, verdict } from './stats.js';

export interface ApprovalWaitContext {
  api: Http;
  stack: Stack;
  adminToken: string;
  model: FakeModel;
  site: { url: string; apiToken: string; ca: string };
  /** The worker's inspector (`--inspect=127.0.0.1:<port>`). */
  workerInspectorPort: number;
  /** The floor's: a client, and the server its bare worker connects to. */
  client: Client;
  temporalAddress: string;
}

/** Runs per batch; two batches, so the second's cost is without the worker's one-off growth. */
const N = 200;
const BATCHES = 2;
/** The team tier's agent limit: one user per batch of 200 agents. */
const PER_USER = 200;

interface Memory {
  rss: number;
  heap: number;
}

/** A worker's memory before and after each of two batches of waiting runs, and how many waited. */
async function twoBatches(
  read: () => Promise<Memory>,
  batch: (b: number) => Promise<number>,
): Promise<{ before: Memory; afterFirst: Memory; afterNext: Memory; waiting: number }> {
  const before = await read();
  const waitingFirst = await batch(0);
  const afterFirst = await read();
  const waitingNext = await batch(1);
  const afterNext = await read();
  return { before, afterFirst, afterNext, waiting: waitingFirst + waitingNext };
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
  // Every run's first turn asks for a write, which waits; nothing answers it during the measure. The
  // floor's model turn offers the site's search (bare.activities.ts), and asks for it.
  ctx.model.fallback = (req: RecordedRequest) =>
    req.body.tools?.some((tool) => tool.name.endsWith('__create_note'))
      ? { toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'waits', body: 'for a person' } }] }
      : { toolUses: [{ name: toolNamed(req, 'search_notes'), input: { query: 'waits' } }] };
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
    const service = await twoBatches(
      () => memoryAfterCollection(ctx.stack.worker!.child.pid!, ctx.workerInspectorPort),
      batch,
    );
    const bare = await bareWaiting(ctx);
    const kb = (n: number): string => `${n.toFixed(1)} KB`;
    const perRun = (m: { afterFirst: Memory; afterNext: Memory }) => ({
      rss: (m.afterNext.rss - m.afterFirst.rss) / N,
      heap: (m.afterNext.heap - m.afterFirst.heap) / N,
    });
    const { rss, heap } = perRun(service);
    line(
      `5. worker memory per run waiting for approval (two batches of ${N} runs, one per agent), vs bare waiting runs`,
      {
        goal: '≤150 KB per run',
        verdict: verdict(rss <= 150 && heap <= 150),
        waiting: `${service.waiting}/${N * BATCHES}`,
        rss_before: `${(service.before.rss / 1024).toFixed(1)} MB`,
        rss_first_batch: kb((service.afterFirst.rss - service.before.rss) / N),
        // The goal's figures: what each further waiting run adds once the worker is set up.
        rss_per_run: kb(rss),
        heap_first_batch: kb((service.afterFirst.heap - service.before.heap) / N),
        heap_used_per_run: kb(heap),
        bare_waiting: `${bare.waiting}/${N * BATCHES}`,
        bare_rss_first_batch: kb((bare.afterFirst.rss - bare.before.rss) / N),
        bare_rss_per_run: kb(perRun(bare).rss),
        bare_heap_used_per_run: kb(perRun(bare).heap),
      },
    );
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

/**
 * The floor: two batches of N bare waiting runs on a bare worker of their own, each batch counted once
 * every run of it has recorded its request. The runs are terminated after.
 */
async function bareWaiting(
  ctx: ApprovalWaitContext,
): Promise<{ before: Memory; afterFirst: Memory; afterNext: Memory; waiting: number }> {
  const taskQueue = `bench-bare-waiting-${Date.now()}`;
  const port = await inspectorPort();
  const { child } = await startChild('bare-worker', [ctx.temporalAddress, taskQueue], /ready/, {
    NODE_OPTIONS: `--inspect=127.0.0.1:${port}`,
    BARE_ACTIVITIES: JSON.stringify({
      modelUrl: ctx.model.url,
      toolUrl: `${ctx.site.url}/api/tools/search_notes`,
      token: ctx.site.apiToken,
      ca: ctx.site.ca,
    }),
  });
  const ids: string[] = [];
  try {
    return await twoBatches(
      () => memoryAfterCollection(child.pid!, port),
      async (b) => {
        const batchIds = Array.from({ length: N }, (_, i) => `${taskQueue}-${b}-${i}`);
        ids.push(...batchIds);
        await load(N, 8, async (i) => {
          await ctx.client.workflow.start<typeof bareWaitingWorkflow>('bareWaitingWorkflow', {
            taskQueue,
            workflowId: batchIds[i]!,
          });
        });
        // Waiting once its request is recorded: the record activity's completion is in its history.
        const recorded = async (id: string): Promise<boolean> => {
          const history = await ctx.client.workflow.getHandle(id).fetchHistory();
          return (history.events ?? []).filter((event) => event.activityTaskCompletedEventAttributes).length >= 2;
        };
        const by = Date.now() + 300_000;
        let waiting = 0;
        for (const id of batchIds) {
          while (!(await recorded(id)) && Date.now() < by) {
            await sleep(200);
          }
          waiting += (await recorded(id)) ? 1 : 0;
        }
        return waiting;
      },
    );
  } finally {
    child.kill('SIGTERM');
    await load(ids.length, 8, async (i) => {
      await ctx.client.workflow
        .getHandle(ids[i]!)
        .terminate('benchmark over')
        .catch(() => undefined);
    });
  }
}
