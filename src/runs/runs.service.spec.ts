import { AppError } from '../common/app-error.js';
import { describe, expect, it } from '@jest/globals';
import type { PayloadCodec } from '@temporalio/common';
import { pageQuery } from '../common/pagination.js';
import { standIn } from '../common/testing/stand-in.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { RunsRepository } from './runs.repository.js';
import { RunsService } from './runs.service.js';
import { FakeRunsRepository } from './testing/fake-runs.repository.js';
import { FakeTemporalClient } from './testing/fake-temporal-client.js';
import { counted, personalScope, workspaceScope } from './testing/fixtures.js';
import { codeOf } from '../common/testing/refusals.js';

const AGENT = '11111111-1111-4111-8111-111111111111';
const RUN = '22222222-2222-4222-8222-222222222222';
const OTHER_RUN = '33333333-3333-4333-8333-333333333333';

function setUp() {
  const runs = new FakeRunsRepository();
  const temporal = new FakeTemporalClient();
  const metrics = new MetricsService();
  // The real queue records a cancelled active run's end in its row before its Update answers.
  temporal.onActiveCancelled = async (runId) => {
    await runs.markCancelled(runId);
  };
  const service = new RunsService(
    standIn<RunsRepository>(runs),
    temporal.asClient(),
    standIn<PayloadCodec>({}),
    metrics,
  );
  return { runs, temporal, metrics, service };
}

describe('RunsService.findInScope (who may see a run)', () => {
  it('finds a run of an agent of the caller', async () => {
    const { runs, service } = setUp();
    runs.agents.set(AGENT, { userId: 'user-1', workspaceId: null });
    runs.seed({ id: RUN, agentId: AGENT });
    await expect(service.findInScope(personalScope('user-1'), RUN)).resolves.toMatchObject({ id: RUN });
  });

  it("answers RUN_NOT_FOUND for another user's run, as for a run that does not exist", async () => {
    const { runs, service } = setUp();
    runs.agents.set(AGENT, { userId: 'user-1', workspaceId: null });
    runs.seed({ id: RUN, agentId: AGENT });
    expect(await codeOf(service.findInScope(personalScope('user-2'), RUN))).toBe('RUN_NOT_FOUND');
    expect(await codeOf(service.findInScope(personalScope('user-1'), OTHER_RUN))).toBe('RUN_NOT_FOUND');
  });

  it('keeps workspace runs out of the personal scope and personal runs out of the workspace', async () => {
    const { runs, service } = setUp();
    runs.agents.set(AGENT, { userId: 'user-1', workspaceId: 'ws-1' });
    runs.seed({ id: RUN, agentId: AGENT });
    expect(await codeOf(service.findInScope(personalScope('user-1'), RUN))).toBe('RUN_NOT_FOUND');
    await expect(service.findInScope(workspaceScope('user-9', 'ws-1', 'viewer'), RUN)).resolves.toMatchObject({
      id: RUN,
    });
    expect(await codeOf(service.findInScope(workspaceScope('user-1', 'ws-2', 'owner'), RUN))).toBe('RUN_NOT_FOUND');
  });

  it('answers RUN_NOT_FOUND for an id that is not a UUID without asking the repository', async () => {
    const { runs, service } = setUp();
    expect(await codeOf(service.findInScope(personalScope('user-1'), "1' OR '1'='1"))).toBe('RUN_NOT_FOUND');
    expect(runs.calls).toEqual([]);
  });
});

describe('RunsService.cancel', () => {
  it('refuses a run that has ended (RUN_NOT_CANCELLABLE) without a call to Temporal', async () => {
    const { runs, temporal, service } = setUp();
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = runs.seed({ id: RUN, agentId: AGENT, status });
      expect(await codeOf(service.cancel(run))).toBe('RUN_NOT_CANCELLABLE');
    }
    expect(temporal.calls).toEqual([]);
  });

  it('takes a queued run out of its queue, marks it cancelled and counts it', async () => {
    const { runs, temporal, metrics, service } = setUp();
    runs.seed({ id: OTHER_RUN, agentId: AGENT, status: 'active' });
    const run = runs.seed({ id: RUN, agentId: AGENT });
    temporal.seedQueue(AGENT, OTHER_RUN, [RUN]);
    const answer = await service.cancel(run);
    expect(answer.status).toBe('cancelled');
    expect(temporal.queues.get(`agent-${AGENT}`)).toMatchObject({ active: OTHER_RUN, queued: [] });
    expect(temporal.calls).toEqual([`agent-${AGENT} cancelQueuedRun`]);
    expect(await counted(metrics.runsEnded, { status: 'cancelled', trigger: 'manual' })).toBe(1);
  });

  it('cancels the active run through its queue, which records the end; the next queued run starts', async () => {
    const { runs, temporal, metrics, service } = setUp();
    const run = runs.seed({ id: RUN, agentId: AGENT, status: 'active', startedAt: new Date() });
    runs.seed({ id: OTHER_RUN, agentId: AGENT });
    temporal.seedQueue(AGENT, RUN, [OTHER_RUN]);
    const answer = await service.cancel(run);
    expect(answer.status).toBe('cancelled');
    expect(temporal.calls).toEqual([`agent-${AGENT} cancelQueuedRun`, `agent-${AGENT} cancelRun`]);
    expect(temporal.queues.get(`agent-${AGENT}`)?.active).toBe(OTHER_RUN);
    // Its workflow counts the end, not the API (no double count).
    expect(await counted(metrics.runsEnded, { status: 'cancelled' })).toBe(0);
  });

  it('answers RUN_NOT_CANCELLABLE when the run ended otherwise before the cancel reached it', async () => {
    const { runs, temporal, service } = setUp();
    const run = runs.seed({ id: RUN, agentId: AGENT, status: 'active' });
    temporal.seedQueue(AGENT, null);
    runs.rows.get(RUN)!.status = 'completed';
    const err = await service.cancel({ ...run, status: 'active' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('RUN_NOT_CANCELLABLE');
    expect((err as AppError).message).toContain('completed');
  });
});

describe('RunsService.listForAgent (keyset pages)', () => {
  it('pages newest first with a cursor that continues where the page ended, and no cursor on the last page', async () => {
    const { runs, service } = setUp();
    const ids = [1, 2, 3, 4, 5].map((n) => `0000000${n}-0000-4000-8000-000000000000`);
    ids.forEach((id, i) => runs.seed({ id, agentId: AGENT, createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)) }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await service.listForAgent(AGENT, pageQuery({ limit: 2, cursor }));
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it('answers VALIDATION_ERROR for a cursor this list never gave', () => {
    expect(() => pageQuery({ limit: 2, cursor: 'not-a-cursor' })).toThrow(AppError);
  });
});

describe('RunsService.queueState and stopAgent', () => {
  it('reads the queue, and null when the agent has no queue', async () => {
    const { temporal, service } = setUp();
    temporal.seedQueue(AGENT, RUN, [OTHER_RUN]);
    await expect(service.queueState(AGENT)).resolves.toEqual({ activeRunId: RUN, queuedRunIds: [OTHER_RUN] });
    await expect(service.queueState('no-such-agent')).resolves.toBeNull();
  });

  it("stops the agent's queue and cancels every run not yet ended, counting each", async () => {
    const { runs, temporal, metrics, service } = setUp();
    runs.seed({ id: RUN, agentId: AGENT, status: 'active', startedAt: new Date() });
    runs.seed({ id: OTHER_RUN, agentId: AGENT });
    runs.seed({ id: '44444444-4444-4444-8444-444444444444', agentId: AGENT, status: 'completed' });
    temporal.seedQueue(AGENT, RUN, [OTHER_RUN]);
    await service.stopAgent(AGENT);
    expect(temporal.queues.has(`agent-${AGENT}`)).toBe(false);
    expect([...runs.rows.values()].map((r) => r.status).sort()).toEqual(['cancelled', 'cancelled', 'completed']);
    expect(await counted(metrics.runsEnded, { status: 'cancelled' })).toBe(2);
  });

  it('still cancels the rows when the queue had already gone', async () => {
    const { runs, service } = setUp();
    runs.seed({ id: RUN, agentId: AGENT });
    await service.stopAgent(AGENT);
    expect(runs.rows.get(RUN)?.status).toBe('cancelled');
  });
});
