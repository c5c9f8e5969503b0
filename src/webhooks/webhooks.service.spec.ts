import { describe, expect, it } from '@jest/globals';
import { hashSecret, type AgentsService } from '../agents/agents.service.js';
import { standIn } from '../common/testing/stand-in.js';
import { enqueueFixture } from '../runs/testing/enqueue-fixture.js';
import { agentFixture } from '../runs/testing/fixtures.js';
import { FakeAgentsService } from './testing/fake-agents.service.js';
import { FakeWebhooksRepository } from './testing/fake-webhooks.repository.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import type { WebhooksRepository } from './webhooks.repository.js';
import { type WebhookDelivery, WebhooksService } from './webhooks.service.js';
import { refusal } from '../common/testing/refusals.js';

const AGENT_ID = '11111111-1111-4111-8111-111111111111';
const SECRET = 'whsec_correct-horse-battery-staple';

function setUp(
  options: { tier?: 'free' | 'harness' | 'team'; pastDue?: boolean; credits?: number; maxQueuedRuns?: number } = {},
) {
  const agents = new FakeAgentsService();
  const agent = agentFixture({
    id: AGENT_ID,
    triggerType: 'webhook',
    webhookSecretHash: hashSecret(SECRET),
    webhookSchema: [{ name: 'orderId', type: 'string', required: true }],
    allowActionOverride: true,
  });
  agents.add(
    agent,
    { tier: options.tier ?? 'harness', subscriptionStatus: options.pastDue ? 'past_due' : 'active' },
    options.credits ?? 10,
  );
  const { runs, temporal, service: enqueuer } = enqueueFixture(options.maxQueuedRuns ?? 1000);
  const recorded = new FakeWebhooksRepository();
  const deliveries = new WebhookDeliveriesService(standIn<WebhooksRepository>(recorded));
  const service = new WebhooksService(standIn<AgentsService>(agents), enqueuer, deliveries);
  return { agents, agent, runs, temporal, service, recorded };
}

function delivery(fields: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    agentId: AGENT_ID,
    secret: SECRET,
    deliveryId: undefined,
    isJson: true,
    body: { orderId: 'o-1' },
    ...fields,
  };
}

describe('WebhooksService.trigger (the intake rules, in the order the specification answers them)', () => {
  it('queues a run for a valid delivery: 202 body with the run id and its position', async () => {
    const { runs, service } = setUp();
    const accepted = await service.trigger(delivery());
    expect(accepted).toEqual({ runId: expect.any(String), status: 'queued', queuePosition: 0 });
    expect(runs.rows.get(accepted.runId)).toMatchObject({ triggeredBy: 'webhook', payload: { orderId: 'o-1' } });
  });

  it('answers AGENT_NOT_FOUND for an unknown agent and for an agent not triggered by webhooks', async () => {
    const { agent, service } = setUp();
    expect((await refusal(service.trigger(delivery({ agentId: 'nope' })))).code).toBe('AGENT_NOT_FOUND');
    agent.triggerType = 'manual';
    expect((await refusal(service.trigger(delivery()))).code).toBe('AGENT_NOT_FOUND');
  });

  it('refuses a missing or wrong secret (WEBHOOK_SECRET_INVALID, 401) before looking at anything else', async () => {
    const { runs, service } = setUp({ tier: 'free', credits: 0 });
    for (const secret of [undefined, '', 'whsec_wrong', `${SECRET} `]) {
      const err = await refusal(service.trigger(delivery({ secret, isJson: false })));
      expect([err.code, err.statusCode]).toEqual(['WEBHOOK_SECRET_INVALID', 401]);
    }
    expect(runs.rows.size).toBe(0);
  });

  it("needs the tier owner's plan to have webhooks (TIER_REQUIRED), paid (SUBSCRIPTION_PAST_DUE)", async () => {
    expect((await refusal(setUp({ tier: 'free' }).service.trigger(delivery()))).code).toBe('TIER_REQUIRED');
    expect((await refusal(setUp({ tier: 'team', pastDue: true }).service.trigger(delivery()))).code).toBe(
      'SUBSCRIPTION_PAST_DUE',
    );
  });

  it('refuses a body that is not JSON, a malformed delivery id and a payload against the schema', async () => {
    const { service } = setUp();
    expect((await refusal(service.trigger(delivery({ isJson: false })))).code).toBe('WEBHOOK_PAYLOAD_INVALID');
    const badId = await refusal(service.trigger(delivery({ deliveryId: 'has space' })));
    expect([badId.code, badId.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 'X-Webhook-Delivery-Id']);
    expect((await refusal(service.trigger(delivery({ deliveryId: 'x'.repeat(201) })))).code).toBe('VALIDATION_ERROR');
    expect((await refusal(service.trigger(delivery({ body: { orderId: 42 } })))).code).toBe('WEBHOOK_PAYLOAD_INVALID');
    expect((await refusal(service.trigger(delivery({ body: [1, 2] })))).code).toBe('WEBHOOK_PAYLOAD_INVALID');
  });

  it("refuses when the agent's user has no credits left (NO_CREDITS), queuing nothing", async () => {
    const { runs, service } = setUp({ credits: 0 });
    expect((await refusal(service.trigger(delivery()))).code).toBe('NO_CREDITS');
    expect(runs.rows.size).toBe(0);
  });

  it('answers a repeated delivery id with the first run, marked duplicate, and queues it once', async () => {
    const { runs, temporal, service } = setUp();
    const first = await service.trigger(delivery({ deliveryId: 'evt:1' }));
    const replay = await service.trigger(delivery({ deliveryId: 'evt:1', body: { orderId: 'other' } }));
    expect(replay).toEqual({ runId: first.runId, status: 'queued', queuePosition: 0, duplicate: true });
    expect(runs.rows.size).toBe(1);
    expect(runs.rows.get(first.runId)?.payload).toEqual({ orderId: 'o-1' });
    expect(temporal.queues.get(`agent-${AGENT_ID}`)?.active).toBe(first.runId);
  });

  it('refuses a delivery past the queue limit with RATE_LIMITED and Retry-After', async () => {
    const { service } = setUp({ maxQueuedRuns: 2 });
    await service.trigger(delivery({ deliveryId: 'a' }));
    await new Promise((resolve) => setTimeout(resolve, 2));
    await service.trigger(delivery({ deliveryId: 'b' }));
    await new Promise((resolve) => setTimeout(resolve, 2));
    const err = await refusal(service.trigger(delivery({ deliveryId: 'c' })));
    expect([err.code, err.statusCode, err.retryAfterSeconds]).toEqual(['RATE_LIMITED', 429, 60]);
  });

  it("marks the run's prompt as the payload's action only when the agent allows it", async () => {
    const { agent, runs, service } = setUp();
    const overridden = await service.trigger(delivery({ body: { orderId: 'o', action: 'Refund it' } }));
    expect(runs.rows.get(overridden.runId)?.systemPromptSource).toBe('webhook_action');
    agent.allowActionOverride = false;
    const kept = await service.trigger(delivery({ body: { orderId: 'o', action: 'Refund it' } }));
    expect(runs.rows.get(kept.runId)?.systemPromptSource).toBe('agent');
  });
});

describe('WebhooksService.trigger records the deliveries of an existing agent', () => {
  /** The accepted path does not wait for its record: let it land. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('an accepted delivery with its run, a refused one with its status, code and field names only', async () => {
    const { service, recorded } = setUp();
    const accepted = await service.trigger(delivery());
    await refusal(service.trigger(delivery({ secret: 'wrong' })));
    await refusal(service.trigger(delivery({ body: { orderId: 42, secretValue: 'do-not-keep' } })));
    await settle();
    expect(recorded.rows).toEqual([
      {
        agentId: AGENT_ID,
        statusCode: 202,
        code: null,
        fields: [],
        requestId: null,
        runId: accepted.runId,
        duplicate: false,
      },
      {
        agentId: AGENT_ID,
        statusCode: 401,
        code: 'WEBHOOK_SECRET_INVALID',
        fields: [],
        requestId: null,
        runId: null,
        duplicate: false,
      },
      {
        agentId: AGENT_ID,
        statusCode: 422,
        code: 'WEBHOOK_PAYLOAD_INVALID',
        fields: ['orderId'],
        requestId: null,
        runId: null,
        duplicate: false,
      },
    ]);
    expect(JSON.stringify(recorded.rows)).not.toContain('do-not-keep');
  });

  it('a repeated delivery id is recorded as a duplicate of the first run', async () => {
    const { service, recorded } = setUp();
    const first = await service.trigger(delivery({ deliveryId: 'evt-1' }));
    await service.trigger(delivery({ deliveryId: 'evt-1' }));
    await settle();
    expect(recorded.rows.map((r) => [r.runId, r.duplicate])).toEqual([
      [first.runId, false],
      [first.runId, true],
    ]);
  });

  it('an unknown agent records nothing', async () => {
    const { service, recorded } = setUp();
    const err = await refusal(service.trigger(delivery({ agentId: '22222222-2222-4222-8222-222222222222' })));
    expect(err.code).toBe('AGENT_NOT_FOUND');
    await settle();
    expect(recorded.rows).toEqual([]);
  });

  it('a record that cannot be written changes no answer', async () => {
    const { service, recorded } = setUp();
    recorded.failing = true;
    expect((await service.trigger(delivery())).status).toBe('queued');
    expect((await refusal(service.trigger(delivery({ secret: 'wrong' })))).code).toBe('WEBHOOK_SECRET_INVALID');
    await settle();
    expect(recorded.rows).toEqual([]);
  });
});
