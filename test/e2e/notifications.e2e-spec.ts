import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Client, Connection } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import type { ReferenceSite } from '../../examples/site/site.js';
import { issueServerCert } from '../../examples/site/tls.js';
import {
  AGENT_HANDLERS,
  type DecideApprovalInput,
  notificationWorkflowId,
  workflowIds,
} from '../../workflows/contracts.js';
import { FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { registerAdmin } from '../utils/admin.js';
import { Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { temporalClient } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';

/** One POST the receiver got: its headers and its body, as it came. */
interface Delivery {
  headers: Record<string, string>;
  body: string;
  status: number;
}

/**
 * An HTTPS endpoint (certificate of the tests' CA) that records every POST and answers each with the
 * next of its scripted statuses (200 once they are used up).
 */
class Receiver {
  readonly deliveries: Delivery[] = [];
  private statuses: number[] = [];

  private readonly server: https.Server;

  private constructor(tls: { cert: string; key: string }) {
    this.server = https.createServer(tls, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const status = this.statuses.shift() ?? 200;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          headers[name] = Array.isArray(value) ? value.join(', ') : (value ?? '');
        }
        this.deliveries.push({ headers, body, status });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver secret detail');
      });
    });
  }

  static async start(tls: { cert: string; key: string }): Promise<Receiver> {
    const receiver = new Receiver(tls);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `https://localhost:${this.port}${path}`;
  }

  answer(...statuses: number[]): void {
    this.statuses.push(...statuses);
  }

  /** The deliveries of one message (its `webhook-id`). */
  of(messageId: string): Delivery[] {
    return this.deliveries.filter((d) => d.headers['webhook-id'] === messageId);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** What the Standard Webhooks package (an implementation independent of the service's) says of a delivery. */
function verifies(secret: string, delivery: Delivery): boolean {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers);
    return true;
  } catch {
    return false;
  }
}

describe('agent notifications: signed deliveries, retried (e2e)', () => {
  let sites: TestSites;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let receiver: Receiver;
  /** Listens on localhost too, but is not allow-listed: the worker must refuse its private address. */
  let refused: Receiver;
  let temporal: Client;
  let connection: Connection;

  beforeAll(async () => {
    sites = await testSites();
    site = await sites.start();
    const tls = await issueServerCert(sites.ca);
    receiver = await Receiver.start(tls);
    refused = await Receiver.start(tls);
    model = await FakeModel.start();
    stack = await Stack.start({
      env: {
        ...siteEnv(sites, [site], 'https://console.example.test'),
        SITE_ALLOW_PRIVATE_HOSTS: `localhost:${site.port},localhost:${receiver.port}`,
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: model.url,
        // Retries after 1 s, 2 s, 4 s… instead of 10 s, 20 s… (the schedule's shape is the same).
        NOTIFICATION_RETRY_INITIAL_SECONDS: '1',
      },
    });
    http = new Http(stack.baseUrl);
    admin = await registerAdmin(http, stack);
    ({ client: temporal, connection } = await temporalClient());
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await model?.stop();
    await receiver?.stop();
    await refused?.stop();
    await sites?.stopAll();
  });

  /** A user with an agent on the reference site that notifies `url` of `events`; its secret, shown once. */
  async function agentNotifying(
    url: string,
    events: string[],
    extra: Record<string, unknown> = {},
  ): Promise<{ user: TestUser; agentId: string; siteId: string; secret: string; siteToken: string }> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    const siteToken = site.issueApiToken('alice').token;
    await http.post(`/api/vault/sites/${added.body.id}/token`, { token: siteToken }, { token: user.token });
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Notifier',
        systemPrompt: 'You keep notes.',
        siteIds: [added.body.id],
        trigger: { type: 'manual' },
        notify: { url, events },
        ...extra,
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    expect(agent.body.notify).toEqual({ url, events });
    expect(agent.body.notifySecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    return { user, agentId: agent.body.id, siteId: added.body.id, secret: agent.body.notifySecret, siteToken };
  }

  async function startRun(user: TestUser, agentId: string): Promise<string> {
    const started = await http.post(`/api/agents/${agentId}/runs`, {}, { token: user.token });
    expect(started.status).toBe(201);
    return started.body.id as string;
  }

  it('a receiver that answers 500 twice then 200 gets three signed deliveries of one message, carrying the outcome', async () => {
    const { user, agentId, secret, siteToken } = await agentNotifying(receiver.url('/hooks/agentsite?team=7'), [
      'run_completed',
    ]);
    receiver.answer(500, 500, 200);
    model.script({ text: 'All notes are tidy.', stopReason: 'end_turn' });
    const runId = await startRun(user, agentId);
    const run = await waitForRun(http, user.token, runId);
    expect(run.status).toBe('completed');

    const messageId = `msg_${runId}_run_completed`;
    const deliveries = await eventually(
      'three deliveries',
      async () => (receiver.of(messageId).length >= 3 ? receiver.of(messageId) : undefined),
      60_000,
    );
    expect(deliveries.map((d) => d.status)).toEqual([500, 500, 200]);
    for (const delivery of deliveries) {
      expect(verifies(secret, delivery)).toBe(true);
      expect(delivery.headers['content-type']).toBe('application/json');
    }
    // Each attempt is signed anew: one id, a timestamp of its own time.
    expect(new Set(deliveries.map((d) => d.headers['webhook-id']))).toEqual(new Set([messageId]));
    const body = JSON.parse(deliveries[2]!.body);
    expect(body).toEqual({
      type: 'run_completed',
      timestamp: expect.any(String),
      data: {
        agent: { id: agentId, name: 'Notifier' },
        run: {
          id: runId,
          status: 'completed',
          triggeredBy: 'manual',
          startedAt: run.startedAt,
          endedAt: run.endedAt,
          output: 'All notes are tidy.',
        },
        consoleUrl: `https://console.example.test/runs/${runId}`,
      },
    });
    for (const delivery of deliveries) {
      expect(delivery.body).not.toContain(siteToken);
      expect(delivery.body).not.toContain(secret);
      expect(delivery.body).not.toContain(secret.slice('whsec_'.length));
    }
    // Delivered: the notification's workflow has ended, and no fourth attempt comes.
    const handle = temporal.workflow.getHandle(notificationWorkflowId(messageId));
    await handle.result();
    expect(receiver.of(messageId)).toHaveLength(3);
  });

  it('a failed run notifies run_failed with its error, and not run_completed', async () => {
    const { user, agentId, secret } = await agentNotifying(receiver.url('/hooks/failed'), [
      'run_failed',
      'run_completed',
    ]);
    // Turn 1 asks for a tool the agent does not have (the run has its context), turn 2 cannot pass.
    model.script({ toolUses: [{ name: 'no_such_tool', input: {} }], stopReason: 'tool_use' }, { status: 400 });
    const runId = await startRun(user, agentId);
    const run = await waitForRun(http, user.token, runId);
    expect(run.status).toBe('failed');

    const [delivery] = await eventually('the run_failed delivery', async () => {
      const got = receiver.of(`msg_${runId}_run_failed`);
      return got.length > 0 ? got : undefined;
    });
    expect(verifies(secret, delivery!)).toBe(true);
    expect(JSON.parse(delivery!.body)).toMatchObject({
      type: 'run_failed',
      data: {
        agent: { id: agentId },
        run: { id: runId, status: 'failed', error: { code: 'MODEL_ERROR', error: expect.any(String) } },
      },
    });
    expect(JSON.parse(delivery!.body).data.run.output).toBeUndefined();
    // The run_failed delivery's workflow has ended; none was started for run_completed.
    await temporal.workflow.getHandle(notificationWorkflowId(`msg_${runId}_run_failed`)).result();
    await expect(
      temporal.workflow.getHandle(notificationWorkflowId(`msg_${runId}_run_completed`)).describe(),
    ).rejects.toThrow(/not found/i);
  });

  it('a call waiting for approval notifies approval_requested with the approval, once', async () => {
    const { user, agentId, siteId, secret } = await agentNotifying(
      receiver.url('/hooks/approvals'),
      ['approval_requested', 'run_completed'],
      { approvals: { scopes: ['write'], timeoutSeconds: 600 } },
    );
    model.script(
      (req) => ({
        text: 'Noting it.',
        toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Waiting', body: 'b' } }],
        stopReason: 'tool_use',
      }),
      { text: 'Done.' },
    );
    const runId = await startRun(user, agentId);
    const [delivery] = await eventually('the approval_requested delivery', async () => {
      const got = receiver.deliveries.filter((d) => JSON.parse(d.body).data.run.id === runId);
      return got.length > 0 ? got : undefined;
    });
    expect(verifies(secret, delivery!)).toBe(true);
    const body = JSON.parse(delivery!.body);
    const approvalId = body.data.approval?.id as string;
    expect(delivery!.headers['webhook-id']).toBe(`msg_${approvalId}`);
    expect(body).toEqual({
      type: 'approval_requested',
      timestamp: expect.any(String),
      data: {
        agent: { id: agentId, name: 'Notifier' },
        run: { id: runId, status: 'active', triggeredBy: 'manual', startedAt: expect.any(String), endedAt: null },
        approval: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          site: expect.any(String),
          siteId,
          tool: 'create_note',
          scope: 'write',
          input: { title: 'Waiting', body: 'b' },
          expiresAt: expect.any(String),
        },
        consoleUrl: `https://console.example.test/runs/${runId}`,
      },
    });
    const run = await waitForRun(http, user.token, runId, ['active']);
    expect(run.timeline.find((e) => e.type === 'approval_requested')).toMatchObject({
      approvalId,
      expiresAt: body.data.approval.expiresAt,
    });
    // Denied (as the API sends it: the Update to the agent's queue): the run goes on and completes.
    const decision: DecideApprovalInput = {
      runId,
      approvalId,
      decision: 'deny',
      note: null,
      by: { userId: user.id, name: 'Ada' },
    };
    await temporal.workflow.getHandle(workflowIds.agent(agentId)).executeUpdate(AGENT_HANDLERS.decideApproval, {
      args: [decision],
    });
    expect((await waitForRun(http, user.token, runId)).status).toBe('completed');
    const completed = await eventually('the run_completed delivery', async () => {
      const got = receiver.of(`msg_${runId}_run_completed`);
      return got.length > 0 ? got : undefined;
    });
    expect(JSON.parse(completed[0]!.body)).toMatchObject({ type: 'run_completed', data: { run: { output: 'Done.' } } });
    // One delivery of the request: a message is started once.
    expect(receiver.of(`msg_${approvalId}`)).toHaveLength(1);
  });

  it('a message already started is not started again: the run completes, the receiver gets it once', async () => {
    const { user, agentId, secret } = await agentNotifying(receiver.url('/hooks/once'), ['run_completed']);
    let release: () => void = () => undefined;
    model.script({ text: 'Held, then done.', stopReason: 'end_turn', gate: new Promise<void>((r) => (release = r)) });
    const runId = await startRun(user, agentId);
    const messageId = `msg_${runId}_run_completed`;
    // The same message started first from elsewhere (as a replayed or retried start would find it).
    await waitForRun(http, user.token, runId, ['active']);
    const first = await temporal.workflow.start('notificationWorkflow', {
      taskQueue: stack.env.TEMPORAL_TASK_QUEUE!,
      workflowId: notificationWorkflowId(messageId),
      args: [{ messageId, event: 'run_completed', agentId, runId }],
    });
    await first.result();
    expect(receiver.of(messageId)).toHaveLength(1);
    release();
    const done = await waitForRun(http, user.token, runId);
    expect(done.status).toBe('completed');
    // The queue went on past the start that found the message there: its same execution runs the next
    // one, which completes and is notified (the runs are archived when the execution hands over).
    model.script({ text: 'Second.', stopReason: 'end_turn' });
    const second = await startRun(user, agentId);
    const secondRun = await waitForRun(http, user.token, second);
    expect(secondRun.status).toBe('completed');
    expect(secondRun.temporal.runId).toBe(done.temporal.runId);
    const [next] = await eventually("the second run's delivery", async () => {
      const got = receiver.of(`msg_${second}_run_completed`);
      return got.length > 0 ? got : undefined;
    });
    expect(verifies(secret, next!)).toBe(true);
    expect(receiver.of(messageId)).toHaveLength(1);
  });

  it('a notify URL on a private address receives nothing, and the run completes while the delivery retries', async () => {
    const { user, agentId } = await agentNotifying(refused.url('/hooks'), ['run_completed']);
    model.script({ text: 'Done here.', stopReason: 'end_turn' });
    const runId = await startRun(user, agentId);
    expect((await waitForRun(http, user.token, runId)).status).toBe('completed');

    const handle = temporal.workflow.getHandle(notificationWorkflowId(`msg_${runId}_run_completed`));
    // Retried (a later attempt is pending), still running, and nothing reached the address.
    const described = await eventually('a second attempt', async () => {
      const d = await handle.describe();
      const attempt = d.raw.pendingActivities?.[0]?.attempt ?? 0;
      return attempt >= 2 ? d : undefined;
    });
    expect(described.status.name).toBe('RUNNING');
    expect(refused.deliveries).toHaveLength(0);
    // The agent's queue is free: a second run completes too.
    model.script({ text: 'Again.', stopReason: 'end_turn' });
    const second = await startRun(user, agentId);
    expect((await waitForRun(http, user.token, second)).status).toBe('completed');
    expect(refused.deliveries).toHaveLength(0);
    await handle.terminate('test over');
  });

  it('after the secret is rotated, deliveries verify with the new secret only', async () => {
    const { user, agentId, secret: before } = await agentNotifying(receiver.url('/hooks/rotate'), ['run_completed']);
    model.script({ text: 'First.', stopReason: 'end_turn' });
    const first = await startRun(user, agentId);
    await waitForRun(http, user.token, first);
    const [one] = await eventually('the first delivery', async () => {
      const got = receiver.of(`msg_${first}_run_completed`);
      return got.length > 0 ? got : undefined;
    });
    expect(verifies(before, one!)).toBe(true);

    const rotated = await http.post(`/api/agents/${agentId}/notify-secret/rotate`, {}, { token: user.token });
    expect(rotated.status).toBe(200);
    const after = rotated.body.notifySecret as string;
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);

    model.script({ text: 'Second.', stopReason: 'end_turn' });
    const second = await startRun(user, agentId);
    await waitForRun(http, user.token, second);
    const [two] = await eventually('the second delivery', async () => {
      const got = receiver.of(`msg_${second}_run_completed`);
      return got.length > 0 ? got : undefined;
    });
    expect(verifies(after, two!)).toBe(true);
    expect(verifies(before, two!)).toBe(false);
  });
});
