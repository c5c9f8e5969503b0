import { describe, expect, it, jest } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { isScheduledTriggerOf, scheduledRunId, ScheduledRunsService } from './scheduled-runs.service.js';
import type { ScheduledRunsRepository } from './scheduled-runs.repository.js';

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
  const setUp = () => {
    const deleteIfQueued = jest.fn(async (_agentId: string, _runId: string) => true);
    const rows = { deleteIfQueued } as unknown as ScheduledRunsRepository;
    const service = new ScheduledRunsService(rows, {} as never, {} as never, {} as never, {} as never);
    return { service, deleteIfQueued };
  };

  it("drops the firing's own run", async () => {
    const { service, deleteIfQueued } = setUp();
    await service.dropSkipped(agentId, scheduledRunId(firing), firing);
    expect(deleteIfQueued).toHaveBeenCalledWith(agentId, scheduledRunId(firing));
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
