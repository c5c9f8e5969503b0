import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { isSealed } from '../../src/temporal/payload-codec.js';
import { WORKFLOW_BUNDLE_PATH } from '../../src/temporal/worker-factory.js';
import { TRACE_HEADER } from '../../workflows/run-trace.interceptors.js';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { type CollectedSpan, OtlpCollector } from '../fixtures/otlp-collector.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import type { Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import type { Stack } from '../utils/stack.js';
import { temporalClient, testDataConverter } from '../utils/temporal.js';
import { registerUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** Text that the run carries (payload, prompt, tool input, model answer): no span may contain it. */
const MARKERS = {
  payload: 'payload-marker-4f1c',
  prompt: 'prompt-marker-9b2e',
  toolInput: 'tool-input-marker-77aa',
  answer: 'answer-marker-c0de',
  query: 'query-marker-5e5e',
};

describe('traces with OTEL_EXPORTER_OTLP_ENDPOINT (e2e)', () => {
  let collector: OtlpCollector;
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;

  beforeAll(async () => {
    collector = await OtlpCollector.start();
    world = await startWorld({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=key%20of%20the%20collector',
        // The exporter's own batch delay (default 5 s), read by the OpenTelemetry SDK itself.
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OUTGOING_CALLS_PER_MINUTE: '1000',
      },
    });
    ({ site, model, stack, http } = world);
  });

  afterAll(async () => {
    await world?.stop();
    await collector?.stop();
  });

  it('one trace runs from the webhook request through the workflow to the tool call and the model calls, carrying no run data', async () => {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: world.admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    const siteToken = site.issueApiToken('alice').token;
    await http.post(`/api/vault/sites/${added.body.id}/token`, { token: siteToken }, { token: user.token });
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Traced triage',
        systemPrompt: `Triage tickets (${MARKERS.prompt}).`,
        siteIds: [added.body.id],
        trigger: { type: 'webhook', schema: [{ name: 'ticket', type: 'string', required: true }] },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);

    model.script(
      (req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: MARKERS.toolInput } }] }),
      { text: `Filed (${MARKERS.answer}).` },
    );
    // A query string (where secrets such as OAuth codes travel) must not reach the span either.
    const fired = await http.post(
      `/api/webhooks/agent/${agent.body.id}?probe=${MARKERS.query}`,
      { ticket: MARKERS.payload },
      { headers: { 'x-webhook-secret': agent.body.webhookSecret } },
    );
    expect(fired.status).toBe(202);
    const run = await waitForRun(http, user.token, fired.body.runId);
    expect(run.status).toBe('completed');
    expect(model.requests).toHaveLength(2);

    const webhookPath = `/api/webhooks/agent/${agent.body.id}`;
    const server = await eventually('the webhook request span', async () =>
      collector.spans.find((s) => s.kind === 'server' && s.attributes['http.route'] === '/api/webhooks/agent/:agentId'),
    );
    const siteHost = new URL(site.url).hostname;
    const modelPort = Number(new URL(model.url).port);
    // Spans arrive in batches from two processes (the run's last ones after the 202): wait for all.
    const trace = await eventually('the whole trace', async () => {
      const spans = collector.trace(server.traceId);
      const toolCalls = spans.filter((s) => s.kind === 'client' && s.attributes['net.peer.name'] === siteHost);
      const modelRequests = spans.filter((s) => s.name === 'POST' && s.attributes['server.port'] === modelPort);
      const turns = spans.filter((s) => s.name === 'RunActivity:modelTurn');
      return turns.length === 2 && toolCalls.length >= 1 && modelRequests.length === 2 ? spans : undefined;
    });
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentOf = (span: CollectedSpan): CollectedSpan | undefined =>
      span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    const only = (name: string): CollectedSpan => {
      const found = trace.filter((s) => s.name === name);
      expect(found.map((s) => s.name)).toEqual([name]);
      return found[0]!;
    };

    // The API: the webhook's request, named by its route, and the signal-with-start under it.
    expect(server).toMatchObject({ service: 'agentsite-api', name: 'POST /api/webhooks/agent/:agentId' });
    expect(server.parentSpanId).toBeUndefined();
    expect(server.attributes['http.target']).toBe(webhookPath);
    expect(server.attributes['http.url']).toBe(`${stack.baseUrl}${webhookPath}`);
    const start = only('SignalWithStartWorkflow:agentQueueWorkflow');
    expect(start.service).toBe('agentsite-api');
    expect(parentOf(start)).toBe(server);

    // The worker: the agent's queue, which runs the run itself, takes the request (the signal), and
    // each of the run's activities runs under the request that queued it (the queue's own workflow
    // span is in a trace of its own).
    expect(parentOf(only('HandleSignal:enqueueRunSignal'))).toBe(start);
    expect(trace.filter((s) => s.name.startsWith('RunWorkflow:'))).toEqual([]);
    const activity = (name: string): CollectedSpan[] => {
      const runs = trace.filter((s) => s.name === `RunActivity:${name}`);
      for (const ran of runs) {
        expect(ran.service).toBe('agentsite-worker');
        expect(parentOf(ran)).toBe(start);
      }
      return runs;
    };
    const modelTurns = activity('modelTurn');
    const toolCalls = activity('callTool');
    expect(modelTurns).toHaveLength(2);
    expect(toolCalls).toHaveLength(1);

    // Each HTTP request of the run: the tool call (axios over https) and both model calls (the
    // Anthropic SDK's span of the call, and under it the fetch request).
    const toolRequest = trace.filter((s) => s.kind === 'client' && s.attributes['net.peer.name'] === siteHost);
    expect(toolRequest).toHaveLength(1);
    expect(toolRequest[0]).toMatchObject({ service: 'agentsite-worker', name: 'POST' });
    expect(toolRequest[0]!.attributes['http.url']).toBe(`${site.url}/api/tools/create_note`);
    expect(parentOf(toolRequest[0]!)).toBe(toolCalls[0]);
    const modelCalls = trace.filter((s) => s.name === 'anthropic.messages.create');
    expect(modelCalls.map((s) => parentOf(s)).sort(bySpanId)).toEqual([...modelTurns].sort(bySpanId));
    const modelRequests = trace.filter((s) => s.name === 'POST' && s.attributes['server.port'] === modelPort);
    expect(modelRequests.map((s) => s.attributes['url.full'])).toEqual([
      `${model.url}/v1/messages`,
      `${model.url}/v1/messages`,
    ]);
    expect(modelRequests.map((s) => parentOf(s)).sort(bySpanId)).toEqual([...modelCalls].sort(bySpanId));
    // The model heard of the trace once per request (the fetch instrumentation's header, not the SDK's too).
    expect(model.requests.map((r) => r.headers.traceparent).sort()).toEqual(
      modelRequests.map((s) => `00-${s.traceId}-${s.spanId}-01`).sort(),
    );

    // Health checks (the test stack polls them) make no spans.
    expect(collector.spans.filter((s) => String(s.attributes['http.target']).startsWith('/api/health'))).toEqual([]);

    // Parent links intact: the request's span is the one root, every other span's parent is in the trace.
    expect(trace.filter((s) => parentOf(s) === undefined)).toEqual([server]);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(['agentsite-api', 'agentsite-worker']));

    // Every export came as OTLP/JSON with the configured headers.
    expect(collector.refused).toEqual([]);
    expect(collector.requestHeaders.every((h) => h['x-collector-key'] === 'key of the collector')).toBe(true);

    // No run data in any span this stack sent, nor the secrets that came with it.
    const everything = collector.spans.map((s) => s.raw).join('\n');
    for (const marker of [...Object.values(MARKERS), agent.body.webhookSecret, siteToken, 'test-key']) {
      expect(everything).not.toContain(marker);
    }
    for (const span of collector.spans) {
      expect(Object.keys(span.attributes).filter((key) => /token|prompt|input|output|payload|memo/i.test(key))).toEqual(
        [],
      );
    }
  });

  it('each queued run joins the trace of the request that queued it: webhooks to a busy agent, a manual start', async () => {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: world.admin.token });
    const create = async (trigger: Record<string, unknown>): Promise<{ id: string; webhookSecret?: string }> =>
      (
        await http.post(
          '/api/agents',
          { name: 'Queued', systemPrompt: 'Answer.', siteIds: [], trigger },
          { token: user.token },
        )
      ).body;
    const hook = await create({ type: 'webhook', schema: [] });
    const manual = await create({ type: 'manual' });
    model.script({ text: 'a', delayMs: 300 }, { text: 'b' }, { text: 'c' });
    const fire = () =>
      http.post(`/api/webhooks/agent/${hook.id}`, {}, { headers: { 'x-webhook-secret': hook.webhookSecret! } });
    const first = await fire();
    const second = await fire(); // queued behind the first, in the agent's already running queue workflow
    expect(second.body.queuePosition).toBe(1);
    const third = await http.post(`/api/agents/${manual.id}/runs`, { input: 'go' }, { token: user.token });
    const runIds = [first.body.runId as string, second.body.runId as string, third.body.id as string];
    for (const runId of runIds) {
      expect((await waitForRun(http, user.token, runId)).status).toBe('completed');
    }

    // Each request's trace holds its run: the run's one model turn, under the enqueue that queued it.
    const targets = [
      `/api/webhooks/agent/${hook.id}`,
      `/api/webhooks/agent/${hook.id}`,
      `/api/agents/${manual.id}/runs`,
    ];
    const chains = await eventually('the three runs traced', async () => {
      const requests = collector.spans
        .filter((s) => s.kind === 'server' && targets.includes(String(s.attributes['http.target'])))
        .sort(
          (x, y) =>
            targets.indexOf(String(x.attributes['http.target'])) - targets.indexOf(String(y.attributes['http.target'])),
        );
      const found = requests.map((request) => {
        const turns = collector.spans.filter(
          (s) => s.traceId === request.traceId && s.name === 'RunActivity:modelTurn',
        );
        const run = turns.length === 1 ? turns[0]! : undefined;
        const enqueue = run && collector.spans.find((s) => s.spanId === run.parentSpanId);
        return enqueue?.parentSpanId === request.spanId ? { run: run!, enqueue: enqueue!, request } : undefined;
      });
      return found.length === 3 && found.every(Boolean) ? found.map((chain) => chain!) : undefined;
    });
    expect(chains.map((c) => c.enqueue.name)).toEqual([
      'SignalWithStartWorkflow:agentQueueWorkflow',
      'SignalWithStartWorkflow:agentQueueWorkflow',
      'UpdateWithStartWorkflow:enqueueRun',
    ]);
    expect(chains.map((c) => c.request.name)).toEqual([
      'POST /api/webhooks/agent/:agentId',
      'POST /api/webhooks/agent/:agentId',
      'POST /api/agents/:id/runs',
    ]);
    for (const chain of chains) {
      expect(chain.request.parentSpanId).toBeUndefined();
      expect(chain.run.traceId).toBe(chain.request.traceId);
    }
    expect(new Set(chains.map((c) => c.request.traceId)).size).toBe(3);
  });

  it('the trace context travels in a Temporal header of its own: in clear, a traceparent only, while payloads stay sealed', async () => {
    const { client, connection } = await temporalClient();
    try {
      const runs = [];
      for await (const wf of client.workflow.list({
        query: `TaskQueue = "${stack.env.TEMPORAL_TASK_QUEUE}" AND WorkflowType = "agentQueueWorkflow" AND AgentRunIds IS NOT NULL`,
      })) {
        runs.push(wf);
      }
      expect(runs.length).toBeGreaterThan(0);
      // The queue runs each run itself: the run's trace rides on each of its activities.
      const history = await client.workflow.getHandle(runs[0]!.workflowId, runs[0]!.runId).fetchHistory();
      const turn = history.events!.find(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn',
      )!.activityTaskScheduledEventAttributes!;
      const header = turn.header!.fields![TRACE_HEADER]!;
      expect(isSealed(header)).toBe(false);
      expect(Object.keys(defaultPayloadConverter.fromPayload<Record<string, string>>(header))).toEqual(['traceparent']);
      expect(turn.input!.payloads!.every((p) => isSealed(p))).toBe(true);

      // A worker without tracing (the plain bundle) carries on the runs a traced worker started.
      const histories = [];
      for (const wf of runs) {
        histories.push({
          workflowId: wf.workflowId,
          history: await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory(),
        });
      }
      for await (const result of Worker.runReplayHistories(
        { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH }, dataConverter: testDataConverter() },
        histories,
      )) {
        expect(result.error).toBeUndefined();
      }
    } finally {
      await connection.close();
    }
  });
});

function bySpanId(a: CollectedSpan | undefined, b: CollectedSpan | undefined): number {
  return (a?.spanId ?? '').localeCompare(b?.spanId ?? '');
}
