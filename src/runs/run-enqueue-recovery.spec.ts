import { describe, expect, it } from '@jest/globals';
import { ServiceError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { refusal } from '../common/testing/refusals.js';
import { isTransientTemporalError } from './temporal-transient.js';
import { enqueueFixture } from './testing/enqueue-fixture.js';
import { agentFixture } from './testing/fixtures.js';
import { repairUnstartedRuns, UNSTARTED_RUN_AGE_MS } from './unstarted-runs.js';

const AGENT_ID = '11111111-1111-4111-8111-111111111111';
const OTHER_ID = '22222222-2222-4222-8222-222222222222';
const agent = agentFixture({ id: AGENT_ID, name: 'Reporter' });

/** A gRPC error as @grpc/grpc-js throws it, wrapped as the Temporal client rethrows it. */
function grpcError(code: number, details: string): Error {
  const cause = Object.assign(new Error(`${code} ${details}`), { code, details });
  return new ServiceError('Update-With-Start failed', { cause });
}

const MULTI_OPERATION = 'Update-with-Start could not be executed.';
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

describe('isTransientTemporalError', () => {
  it.each([
    ['Update-with-Start could not be executed (FAILED_PRECONDITION)', grpcError(9, MULTI_OPERATION), true],
    ['UNAVAILABLE', grpcError(14, 'connection refused'), true],
    ['DEADLINE_EXCEEDED', grpcError(4, 'deadline'), true],
    ['RESOURCE_EXHAUSTED', grpcError(8, 'busy'), true],
    [
      'an update call timed out',
      new WorkflowUpdateRPCTimeoutOrCancelledError('timeout', { cause: new Error('deadline') }),
      true,
    ],
    ['another FAILED_PRECONDITION', grpcError(9, 'namespace is not active'), false],
    ['INVALID_ARGUMENT', grpcError(3, 'bad request'), false],
    ['a refusal of the validator', new WorkflowUpdateFailedError('refused', ApplicationFailure.create({})), false],
    ['a plain error', new Error('14 UNAVAILABLE'), false],
  ])('%s', (_what, err, transient) => {
    expect(isTransientTemporalError(err)).toBe(transient);
  });
});

describe('RunEnqueueService.enqueue when Temporal fails for a moment', () => {
  it('retries the same update through transient failures and queues the run once', async () => {
    const { runs, temporal, service } = enqueueFixture();
    temporal.failEnqueues.push(grpcError(9, MULTI_OPERATION), grpcError(14, 'unavailable'));
    const { run } = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' });
    expect(temporal.calls.filter((c) => c.endsWith('enqueueRun'))).toHaveLength(3);
    expect([...runs.rows.keys()]).toEqual([run.id]);
    expect(temporal.queues.get(`agent-${AGENT_ID}`)!.active).toBe(run.id);
  });

  it('answers RATE_LIMITED with a Retry-After, leaving no row, when Temporal keeps failing', async () => {
    const { runs, temporal, service } = enqueueFixture();
    temporal.failEnqueues.push(...[1, 2, 3, 4].map(() => grpcError(9, MULTI_OPERATION)));
    const err = await refusal(service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' }));
    expect({ code: err.code, statusCode: err.statusCode, retryAfter: err.retryAfterSeconds }).toEqual({
      code: 'RATE_LIMITED',
      statusCode: 429,
      retryAfter: 5,
    });
    expect(runs.rows.size).toBe(0);
    // Retryable when a schedule's firing (an activity) meets it.
    expect((err as unknown as { retryable?: boolean }).retryable).toBe(true);
  });
});

describe('rows left queued by a start that never reached Temporal', () => {
  it('no longer refuse a manual start while the previous run closes: the stale row goes first', async () => {
    const { runs, temporal, service } = enqueueFixture();
    const first = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' });
    runs.rows.get(first.run.id)!.status = 'completed';
    // A dead API's row: inserted five minutes ago, its update never accepted.
    runs.seed({ id: 'stale-run', agentId: AGENT_ID, queuedAt: minutesAgo(5) });
    setTimeout(() => {
      temporal.queues.get(`agent-${AGENT_ID}`)!.active = null;
    }, 150);
    const second = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' });
    expect(second.run.id).not.toBe(first.run.id);
    expect(runs.rows.has('stale-run')).toBe(false);
  });

  it('repairUnstartedRuns deletes only old rows without a delivery id that the queue does not hold, up to the limit', async () => {
    const { runs, temporal, service } = enqueueFixture();
    temporal.seedQueue(AGENT_ID, 'held-active', ['held-queued']);
    const old = minutesAgo(UNSTARTED_RUN_AGE_MS / 60_000 + 1);
    runs.seed({ id: 'held-active', agentId: AGENT_ID, queuedAt: old });
    runs.seed({ id: 'held-queued', agentId: AGENT_ID, queuedAt: old });
    runs.seed({ id: 'lost-1', agentId: AGENT_ID, queuedAt: minutesAgo(10) });
    runs.seed({ id: 'lost-2', agentId: OTHER_ID, queuedAt: minutesAgo(9) }); // no queue workflow at all
    runs.seed({ id: 'lost-3', agentId: OTHER_ID, queuedAt: minutesAgo(8) });
    runs.seed({ id: 'young', agentId: AGENT_ID, queuedAt: minutesAgo(1) });
    runs.seed({ id: 'webhook', agentId: AGENT_ID, queuedAt: old, triggeredBy: 'webhook', deliveryId: 'd-1' });
    runs.seed({ id: 'ended', agentId: AGENT_ID, queuedAt: old, status: 'completed' });
    expect(await service.repairUnstartedRuns(2)).toEqual(['lost-1', 'lost-2']);
    expect(await service.repairUnstartedRuns(10)).toEqual(['lost-3']);
    expect([...runs.rows.keys()].sort()).toEqual(['ended', 'held-active', 'held-queued', 'webhook', 'young']);
  });

  it('keeps the rows of an agent whose queue does not answer (no worker free)', async () => {
    const { runs, temporal } = enqueueFixture();
    runs.seed({ id: 'lost', agentId: AGENT_ID, queuedAt: minutesAgo(10) });
    const client = temporal.asClient();
    const silent = {
      workflow: {
        ...client.workflow,
        getHandle: () => ({ query: () => Promise.reject(new Error('query timed out')) }),
      },
    } as unknown as typeof client;
    expect(await repairUnstartedRuns(runs, silent, 10)).toEqual([]);
    expect(runs.rows.has('lost')).toBe(true);
  });
});
