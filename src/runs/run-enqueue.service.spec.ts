import { describe, expect, it } from '@jest/globals';
import { enqueueFixture } from './testing/enqueue-fixture.js';
import { agentFixture, counted } from './testing/fixtures.js';
import { refusal } from '../common/testing/refusals.js';

const AGENT_ID = '11111111-1111-4111-8111-111111111111';
const agent = agentFixture({ id: AGENT_ID, name: 'Reporter' });

function setUp(maxQueuedRuns = 3) {
  return enqueueFixture(maxQueuedRuns);
}

/** Lets the clock move on: a run's queue position counts the runs queued before its instant. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2));
}

describe('RunEnqueueService.enqueue (manual runs)', () => {
  it('writes the row, starts the agent queue once with its search attributes, and the first run is next', async () => {
    const { runs, temporal, metrics, service } = setUp();
    const { run, queuePosition, duplicate } = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'queue' });
    expect({ queuePosition, duplicate, status: run.status }).toEqual({
      queuePosition: 0,
      duplicate: false,
      status: 'queued',
    });
    expect(runs.rows.get(run.id)).toMatchObject({ agentId: AGENT_ID, workflowId: `agent-${AGENT_ID}` });
    await service.enqueue(agent, { triggeredBy: 'manual', mode: 'queue' });
    expect(temporal.starts).toHaveLength(1);
    expect(temporal.starts[0]).toMatchObject({
      workflowType: 'agentQueueWorkflow',
      workflowId: `agent-${AGENT_ID}`,
      taskQueue: 'unit',
    });
    expect(await counted(metrics.runsQueued, { trigger: 'manual' })).toBe(2);
  });

  it('refuses a manual run while one is queued or active (AGENT_ALREADY_RUNNING) and leaves no row behind', async () => {
    const { runs, service } = setUp();
    const first = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' });
    const err = await refusal(service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' }));
    expect(err.code).toBe('AGENT_ALREADY_RUNNING');
    expect(err.statusCode).toBe(409);
    expect([...runs.rows.keys()]).toEqual([first.run.id]);
  });

  it('retries a manual start while the previous run has ended but its queue has not let go yet', async () => {
    const { runs, temporal, service } = setUp();
    const first = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' });
    // The row has ended (the run's last step) while the queue still holds it: it lets go a moment later.
    runs.rows.get(first.run.id)!.status = 'completed';
    setTimeout(() => {
      temporal.queues.get(`agent-${AGENT_ID}`)!.active = null;
    }, 150);
    const second = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'reject_if_busy' });
    expect(second.run.id).not.toBe(first.run.id);
    expect(temporal.calls.filter((c) => c.endsWith('enqueueRun')).length).toBeGreaterThan(2);
  });

  it('answers the first run for a repeated delivery id, without a second row or count', async () => {
    const { runs, metrics, service } = setUp();
    const first = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'queue', deliveryId: 'd-1' });
    const again = await service.enqueue(agent, { triggeredBy: 'manual', mode: 'queue', deliveryId: 'd-1' });
    expect(again).toMatchObject({ duplicate: true, run: { id: first.run.id } });
    expect(runs.rows.size).toBe(1);
    expect(await counted(metrics.runsQueued, { trigger: 'manual' })).toBe(1);
  });

  it('removes its queued row when Temporal cannot be reached, and passes the error on', async () => {
    const { runs, temporal, service } = setUp();
    temporal.failNextEnqueue = new Error('14 UNAVAILABLE: connection refused');
    await expect(service.enqueue(agent, { triggeredBy: 'manual', mode: 'queue' })).rejects.toThrow('UNAVAILABLE');
    expect(runs.rows.size).toBe(0);
  });
});

describe('RunEnqueueService.enqueueWebhook', () => {
  it('queues webhook runs FIFO with their positions, the payload in the row only', async () => {
    const { runs, temporal, service } = setUp();
    const positions: number[] = [];
    for (const n of [1, 2, 3]) {
      const { run, queuePosition } = await service.enqueueWebhook(agent, { payload: { n }, deliveryId: `d-${n}` });
      positions.push(queuePosition);
      await tick();
      expect(runs.rows.get(run.id)?.payload).toEqual({ n });
    }
    expect(positions).toEqual([0, 1, 2]);
    const queue = temporal.queues.get(`agent-${AGENT_ID}`)!;
    expect(queue.queued.every((r) => r.payload === null)).toBe(true);
  });

  it('refuses a delivery past MAX_QUEUED_RUNS with RATE_LIMITED and a Retry-After, keeping no row', async () => {
    const { runs, temporal, service } = setUp(2);
    await service.enqueueWebhook(agent, { payload: {}, deliveryId: 'd-1' });
    await tick();
    await service.enqueueWebhook(agent, { payload: {}, deliveryId: 'd-2' });
    await tick();
    const err = await refusal(service.enqueueWebhook(agent, { payload: {}, deliveryId: 'd-3' }));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.statusCode).toBe(429);
    expect(err.retryAfterSeconds).toBe(60);
    expect(runs.rows.size).toBe(2);
    expect(temporal.calls.filter((c) => c.endsWith('enqueueRunSignal'))).toHaveLength(2);
  });

  it('answers a repeated delivery with the first run and its current position, sending its request again', async () => {
    const { runs, temporal, metrics, service } = setUp();
    await service.enqueueWebhook(agent, { payload: { n: 0 }, deliveryId: 'd-0' });
    await tick();
    const first = await service.enqueueWebhook(agent, { payload: { n: 1 }, deliveryId: 'd-1' });
    const again = await service.enqueueWebhook(agent, { payload: { n: 1 }, deliveryId: 'd-1' });
    expect(again).toMatchObject({ duplicate: true, queuePosition: 1, run: { id: first.run.id } });
    expect(runs.rows.size).toBe(2);
    expect(temporal.calls.filter((c) => c.endsWith('enqueueRunSignal'))).toHaveLength(3);
    expect(temporal.queues.get(`agent-${AGENT_ID}`)!.queued).toHaveLength(1);
    expect(await counted(metrics.runsQueued, { trigger: 'webhook' })).toBe(2);
  });

  it("hands one agent's concurrent deliveries to its queue one at a time: each position is its place there", async () => {
    const { temporal, service } = setUp(10);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The first delivery's signal is slow: the second must not overtake it.
    temporal.beforeSignal = async (request) => {
      if ((request.deliveryId ?? '') === 'd-1') {
        await held;
      }
    };
    const first = service.enqueueWebhook(agent, { payload: { n: 1 }, deliveryId: 'd-1' });
    await tick();
    const second = service.enqueueWebhook(agent, { payload: { n: 2 }, deliveryId: 'd-2' });
    await tick();
    release();
    const answers = await Promise.all([first, second]);
    expect(answers.map((a) => a.queuePosition)).toEqual([0, 1]);
    const queue = temporal.queues.get(`agent-${AGENT_ID}`)!;
    expect([queue.active, ...queue.queued.map((r) => r.runId)]).toEqual(answers.map((a) => a.run.id));
  });

  it('removes the new row when the signal fails, so a retried delivery starts afresh', async () => {
    const { runs, temporal, service } = setUp();
    temporal.failNextEnqueue = new Error('14 UNAVAILABLE');
    await expect(service.enqueueWebhook(agent, { payload: {}, deliveryId: 'd-1' })).rejects.toThrow('UNAVAILABLE');
    expect(runs.rows.size).toBe(0);
    const retried = await service.enqueueWebhook(agent, { payload: {}, deliveryId: 'd-1' });
    expect(retried.duplicate).toBe(false);
  });
});
