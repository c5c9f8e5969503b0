/**
 * Benchmarks 10 and 11's runs, by kind: a manual run (POST /api/agents/:id/runs), a webhook's run, and
 * a scheduled run (the agent's Temporal schedule fired), each a tool call and two model turns as in
 * benchmark 2; beside each, the bare workflow making the same calls (bare.workflow.ts), started
 * directly, by a signal-with-start, or by a bare Temporal schedule.
 *
 * Runs go one after another, each once the previous has wholly ended (its row, and every workflow it
 * involved idle or closed), so every history is the same from one bench run to the next: no two runs
 * meet in a workflow task, and the figures do not depend on the machine's speed. Waiting looks at
 * Temporal only (never at the database, whose statements benchmark 11 counts).
 */
import { type Client, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Http } from '../test/utils/http.js';
import { workflowIds } from '../workflows/contracts.js';

export const RUN_KINDS = ['manual', 'webhook', 'scheduled'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** The workflows a run involved: an id, and the execution to read back from (its newest when absent). */
export type Involved = Array<{ workflowId: string; runId?: string }>;

/** One side of a kind: `run()` makes one run, waits until it has wholly ended, and returns its id. */
export interface RunSide {
  run(): Promise<string>;
  /** Every workflow the runs so far involved. */
  involved(): Involved;
  remove(): Promise<void>;
}

export interface KindsContext {
  api: Http;
  client: Client;
  userToken: string;
  siteId: string;
  /** The bare worker's task queue. */
  bareQueue: string;
}

/** A daily cron that does not fire during a bench (the runs are fired by `trigger`). */
const DORMANT_CRON = '0 3 1 1 *';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once the workflow has no task or activity pending (polling its description). */
async function idle(client: Client, workflowId: string): Promise<void> {
  const by = Date.now() + 120_000;
  let quiet = 0;
  let length = -1;
  while (Date.now() < by) {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    const settled =
      (raw.pendingActivities ?? []).length === 0 &&
      !raw.pendingWorkflowTask &&
      (raw.pendingChildren ?? []).length === 0;
    const now = Number(raw.workflowExecutionInfo?.historyLength ?? 0);
    // Twice in a row with the same history: nothing was on its way between the two reads.
    quiet = settled && now === length ? quiet + 1 : 0;
    length = now;
    if (quiet >= 2) {
      return;
    }
    await sleep(20);
  }
  throw new Error(`${workflowId} did not settle within 120 s`);
}

/**
 * Fires a schedule now and returns the workflow its action started. Schedules name that workflow by
 * the second it was started in: the next firing waits for a second of its own.
 */
async function fire(client: Client, scheduleId: string, last: { at: number }): Promise<Involved[number]> {
  await sleep(Math.max(0, Math.floor(last.at / 1000) * 1000 + 1000 - Date.now()) + 20);
  const handle = client.schedule.getHandle(scheduleId);
  const before = (await handle.describe()).info.numActionsTaken;
  last.at = Date.now();
  await handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  const by = Date.now() + 60_000;
  while (Date.now() < by) {
    const { info } = await handle.describe();
    if (info.numActionsTaken > before) {
      const { workflow } = info.recentActions.at(-1)!.action;
      return { workflowId: workflow.workflowId, runId: workflow.firstExecutionRunId };
    }
    await sleep(20);
  }
  throw new Error(`schedule ${scheduleId} took no action within 60 s`);
}

/** The service's side: one agent of the kind (with the user's site), its runs one after another. */
export async function serviceSide(ctx: KindsContext, kind: RunKind, name: string): Promise<RunSide> {
  const trigger =
    kind === 'webhook'
      ? { type: 'webhook', schema: [] }
      : kind === 'scheduled'
        ? { type: 'scheduled', cron: DORMANT_CRON }
        : { type: 'manual' };
  const created = await ctx.api.post(
    '/api/agents',
    { name, systemPrompt: 'p', siteIds: [ctx.siteId], trigger },
    { token: ctx.userToken },
  );
  if (created.status !== 201) {
    throw new Error(`creating a ${kind} agent answered ${created.status} ${created.text}`);
  }
  const agent = created.body as { id: string; webhookSecret?: string };
  const queue = workflowIds.agent(agent.id);
  const others: Involved = [];
  const fired = { at: 0 };
  const start = async (): Promise<string> => {
    if (kind === 'scheduled') {
      const started = await fire(ctx.client, workflowIds.schedule(agent.id), fired);
      others.push(started);
      // The trigger's result names the run; it closes once the run has ended.
      const result = await ctx.client.workflow.getHandle(started.workflowId, started.runId).result();
      const runId = (result as { runId?: string } | null)?.runId;
      if (runId === undefined) {
        throw new Error(`the schedule of agent ${agent.id} started no run: ${JSON.stringify(result)}`);
      }
      return runId;
    }
    const res =
      kind === 'webhook'
        ? await ctx.api.post(
            `/api/webhooks/agent/${agent.id}`,
            { bench: 10 },
            { headers: { 'x-webhook-secret': agent.webhookSecret! } },
          )
        : await ctx.api.post(`/api/agents/${agent.id}/runs`, {}, { token: ctx.userToken });
    if (res.status !== 201 && res.status !== 202) {
      throw new Error(`a ${kind} run answered ${res.status} ${res.text}`);
    }
    return (res.body as { runId?: string; id?: string }).runId ?? (res.body as { id: string }).id;
  };
  return {
    run: async () => {
      const runId = await start();
      await idle(ctx.client, queue);
      return runId;
    },
    involved: () => [{ workflowId: queue }, ...others],
    remove: async () => void (await ctx.api.delete(`/api/agents/${agent.id}`, { token: ctx.userToken })),
  };
}

/** The bare side of a kind: each run a bare workflow of its own, started as the kind's runs are. */
export async function bareSide(ctx: KindsContext, kind: RunKind, name: string): Promise<RunSide> {
  const runs: Involved = [];
  const scheduleId = `bench10-${name}`;
  if (kind === 'scheduled') {
    await ctx.client.schedule.create({
      scheduleId,
      spec: { cronExpressions: [DORMANT_CRON], timezone: 'UTC' },
      action: {
        type: 'startWorkflow',
        workflowType: 'bareRunWorkflow',
        workflowId: scheduleId,
        taskQueue: ctx.bareQueue,
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '5 minutes' },
    });
  }
  const fired = { at: 0 };
  return {
    run: async () => {
      const workflowId = `bench10-${name}-${runs.length}`;
      if (kind === 'scheduled') {
        const started = await fire(ctx.client, scheduleId, fired);
        runs.push(started);
        await ctx.client.workflow.getHandle(started.workflowId, started.runId).result();
        return started.workflowId;
      }
      runs.push({ workflowId });
      if (kind === 'webhook') {
        const handle = await ctx.client.workflow.signalWithStart('bareSignaledRunWorkflow', {
          taskQueue: ctx.bareQueue,
          workflowId,
          signal: 'bareRequest',
          signalArgs: ['1'],
        });
        await handle.result();
      } else {
        await ctx.client.workflow.execute('bareRunWorkflow', { taskQueue: ctx.bareQueue, workflowId });
      }
      return workflowId;
    },
    involved: () => [...runs],
    remove: async () => {
      if (kind === 'scheduled') {
        await ctx.client.schedule.getHandle(scheduleId).delete();
      }
    },
  };
}
