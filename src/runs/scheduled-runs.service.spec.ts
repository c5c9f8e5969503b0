import { describe, expect, it, jest } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { isScheduledTriggerOf, scheduledRunId, ScheduledRunsService } from './scheduled-runs.service.js';
import type { ScheduledRow, ScheduledRunsRepository } from './scheduled-runs.repository.js';

const agentId = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';
const firing = {
  workflowId: `scheduled-${agentId}-2026-11-27T09:00:00Z`,
  workflowType: 'scheduledTriggerWorkflow',
  runId: 'a1b2c3d4-0000-4000-8000-000000000001',
};

describe('scheduledRunId', () => {
  it('is a UUID of the firing: the same for every attempt, another for another firing or execution', () => {
    const id = scheduledRunId(firing);
    expect(id).toMatch(UUID);
    expect(id[14]).toBe('8');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
    expect(scheduledRunId({ ...firing })).toBe(id);
    expect(scheduledRunId({ ...firing, runId: 'a1b2c3d4-0000-4000-8000-000000000002' })).not.toBe(id);
    expect(scheduledRunId({ ...firing, workflowId: `scheduled-${agentId}-2026-11-27T10:00:00Z` })).not.toBe(id);
  });
});

describe('isScheduledTriggerOf', () => {
  it("accepts the agent's schedule's firings only", () => {
    expect(isScheduledTriggerOf(agentId, firing)).toBe(true);
    expect(isScheduledTriggerOf(agentId, { ...firing, workflowType: 'forged' })).toBe(false);
    expect(isScheduledTriggerOf(agentId, { ...firing, workflowId: `scheduled-${agentId}-later` })).toBe(false);
    expect(isScheduledTriggerOf(agentId, { ...firing, workflowId: `scheduled-${agentId}` })).toBe(false);
    expect(isScheduledTriggerOf('not-a-uuid', firing)).toBe(false);
    expect(isScheduledTriggerOf(null, firing)).toBe(false);
  });
});

describe('ScheduledRunsService.dropSkipped', () => {
  const setUp = (deleted = true) => {
    const deleteIfQueued = jest.fn(async (_agentId: string, _runId: string) => deleted);
    const rows = { deleteIfQueued } as unknown as ScheduledRunsRepository;
    const metrics = new MetricsService();
    const service = new ScheduledRunsService(rows, {} as never, {} as never, {} as never, metrics);
    return { service, deleteIfQueued, metrics };
  };

  it("drops the firing's own run, and counts the firing skipped (busy) when a row went", async () => {
    const { service, deleteIfQueued, metrics } = setUp();
    await service.dropSkipped(agentId, scheduledRunId(firing), firing);
    expect(deleteIfQueued).toHaveBeenCalledWith(agentId, scheduledRunId(firing));
    expect(await skipped(metrics)).toEqual({ busy: 1 });
    // A drop retried after its row went deletes nothing and counts nothing more.
    const again = setUp(false);
    await again.service.dropSkipped(agentId, scheduledRunId(firing), firing);
    expect(await skipped(again.metrics)).toEqual({});
  });

  it('refuses another run, or a caller that is not a firing of the agent, and deletes nothing', async () => {
    const { service, deleteIfQueued } = setUp();
    const other = scheduledRunId({ ...firing, runId: 'a1b2c3d4-0000-4000-8000-000000000009' });
    for (const [runId, caller] of [
      [other, firing],
      [scheduledRunId(firing), { ...firing, workflowType: 'forged' }],
    ] as const) {
      const refused = await service.dropSkipped(agentId, runId, caller).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe('PERMISSION_DENIED');
    }
    expect(deleteIfQueued).not.toHaveBeenCalled();
  });
});

/** agentsite_scheduled_runs_skipped_total by reason (reasons never counted left out). */
async function skipped(metrics: MetricsService): Promise<Record<string, number>> {
  const { values } = await metrics.scheduledRunsSkipped.get();
  return Object.fromEntries(values.filter((v) => v.value > 0).map((v) => [String(v.labels.reason), v.value]));
}

describe('ScheduledRunsService.enqueue: a firing that runs nothing', () => {
  const due = { userId: 'u', name: 'Nightly', scheduled: true, credits: 10 };
  const cases: Array<[string, ScheduledRow, string, string]> = [
    ['gone', { agent: null, busy: false, existing: null, insertedAt: null }, 'not_scheduled', 'no longer scheduled'],
    [
      'no longer scheduled',
      { agent: { ...due, scheduled: false }, busy: false, existing: null, insertedAt: null },
      'not_scheduled',
      'no longer scheduled',
    ],
    [
      'without credits',
      { agent: { ...due, credits: 0 }, busy: false, existing: null, insertedAt: null },
      'no_credits',
      'no credits',
    ],
    ['busy', { agent: due, busy: true, existing: null, insertedAt: null }, 'busy', 'a queued or active run'],
  ];

  it.each(cases)('is answered skipped and counted by its reason (%s)', async (_what, row, reason, said) => {
    const insert = jest.fn(async () => row);
    const repair = jest.fn(async () => []);
    const metrics = new MetricsService();
    const service = new ScheduledRunsService(
      { insert } as unknown as ScheduledRunsRepository,
      { repairUnstartedRuns: repair } as never,
      {} as never,
      {} as never,
      metrics,
    );
    const answer = await service.enqueue(agentId, firing);
    expect(answer).toEqual({ skipped: expect.stringContaining(said) });
    expect(await skipped(metrics)).toEqual({ [reason]: 1 });
    expect(await metrics.runsQueued.get()).toMatchObject({ values: [] });
  });
});
