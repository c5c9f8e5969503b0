import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  ActivityFailure,
  type ApplicationFailure,
  type Client,
  type Connection,
  WorkflowFailedError,
} from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import pg from 'pg';
import { toolNamed } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { eventually, type RunView, waitForRun } from '../utils/runs.js';
import { temporalClient, testDataConverter } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';
import {
  AGENT_HANDLERS,
  type DecideApprovalInput,
  type RequestApprovalInput,
  type SettleApprovalInput,
  workflowIds,
} from '../../workflows/contracts.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/**
 * The worker's side of approvals against the real service (API, worker, PostgreSQL, Temporal), the
 * reference site and the fake model: a run whose agent's policy lists `write` waits before a write
 * call (its row active, the approvals row pending, the timeline saying so), and the decision, sent as
 * the API sends it (the Update to the agent's queue), lets the call through once. The agent's policy
 * is written to its row here (the API's fields for it are another part's).
 */
describe('approvals: a run waits for a decision (e2e)', () => {
  let world: World;
  let connection: Connection;
  let temporal: Client;
  let db: pg.Client;

  beforeAll(async () => {
    // Short queue executions: the run's archive, written when its execution hands over, comes soon.
    world = await startWorld({ env: { AGENT_QUEUE_EXECUTION_SECONDS: '2' } });
    ({ client: temporal, connection } = await temporalClient());
    db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
  });

  beforeEach(() => world.model.reset());

  afterAll(async () => {
    await db?.end();
    await connection?.close();
    await world?.stop();
  });

  async function userWithAgent(): Promise<{ user: TestUser; agentId: string; siteId: string }> {
    const { http, site } = world;
    const user = await registerUser(http);
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const agent = await http.post(
      '/api/agents',
      { name: 'Careful', systemPrompt: 'You keep notes.', siteIds: [added.body.id], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    return { user, agentId: agent.body.id, siteId: added.body.id };
  }

  async function getRun(user: TestUser, runId: string): Promise<RunView> {
    const res = await world.http.get<RunView>(`/api/runs/${runId}`, { token: user.token });
    expect(res.status).toBe(200);
    return res.body;
  }

  it('waits before a write call with its row active and the approval pending; approved, the site gets the call once', async () => {
    const { user, agentId, siteId } = await userWithAgent();
    await db.query("UPDATE agents SET approval_scopes = '{write}', approval_timeout_seconds = 600 WHERE id = $1", [
      agentId,
    ]);
    const title = `Approved once ${agentId}`;
    world.model.script(
      (req) => ({
        text: 'Noting it.',
        toolUses: [{ name: toolNamed(req, 'create_note'), input: { title, body: 'b' } }],
      }),
      { text: 'The note is kept.' },
    );
    const started = await world.http.post(
      `/api/agents/${agentId}/runs`,
      { input: 'Keep a note' },
      { token: user.token },
    );
    expect(started.status).toBe(201);
    const runId = started.body.id as string;

    const pending = await eventually('the pending approval', async () => {
      const { rows } = await db.query('SELECT * FROM approvals WHERE run_id = $1', [runId]);
      return rows[0] as Record<string, unknown> | undefined;
    });
    expect(pending).toMatchObject({
      run_id: runId,
      agent_id: agentId,
      user_id: user.id,
      workspace_id: null,
      site_id: siteId,
      tool: 'create_note',
      scope: 'write',
      input: { title, body: 'b' },
      status: 'pending',
      decided_at: null,
    });
    expect((pending.expires_at as Date).getTime() - (pending.requested_at as Date).getTime()).toBe(600_000);
    const approvalId = pending.id as string;

    const waiting = await eventually('the request in the timeline', async () => {
      const run = await getRun(user, runId);
      return run.timeline.some((e) => e.type === 'approval_requested') ? run : undefined;
    });
    expect(waiting.status).toBe('active');
    expect(waiting.timeline.map((e) => e.type)).toEqual(['triggered', 'model_turn', 'approval_requested']);
    expect(waiting.timeline[2]).toMatchObject({
      approvalId,
      siteId,
      tool: 'create_note',
      input: { title, body: 'b' },
      scope: 'write',
      expiresAt: (pending.expires_at as Date).toISOString(),
    });
    expect(world.site.notesOf('alice').filter((n) => n.title === title)).toEqual([]);

    // As the API sends it: the Update to the agent's queue, answered once the outcome is recorded.
    const queue = temporal.workflow.getHandle(workflowIds.agent(agentId));
    const decision: DecideApprovalInput = {
      runId,
      approvalId,
      decision: 'approve',
      note: 'Go ahead',
      by: { userId: user.id, name: 'Ada' },
    };
    expect(await queue.executeUpdate(AGENT_HANDLERS.decideApproval, { args: [decision] })).toBe('approved');
    const { rows: decided } = await db.query('SELECT * FROM approvals WHERE id = $1', [approvalId]);
    expect(decided[0]).toMatchObject({
      status: 'approved',
      decided_by: user.id,
      decided_by_name: 'Ada',
      note: 'Go ahead',
    });
    expect(decided[0].decided_at).toBeInstanceOf(Date);
    // A second decision is refused by the workflow and changes nothing.
    await expect(
      queue.executeUpdate(AGENT_HANDLERS.decideApproval, { args: [{ ...decision, decision: 'deny' }] }),
    ).rejects.toMatchObject({ cause: { type: 'VALIDATION_ERROR' } });

    const done = await waitForRun(world.http, user.token, runId);
    expect(done.status).toBe('completed');
    expect(world.site.notesOf('alice').filter((n) => n.title === title)).toHaveLength(1);
    expect(done.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'approval_requested',
      'approval_decided',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(done.timeline[3]).toMatchObject({
      approvalId,
      decision: 'approve',
      by: { userId: user.id, name: 'Ada' },
      note: 'Go ahead',
    });
    expect(done.timeline[5]).toMatchObject({ ok: true, result: { title } });
    const { rows: after } = await db.query('SELECT status FROM approvals WHERE run_id = $1', [runId]);
    expect(after).toEqual([{ status: 'approved' }]);

    // The archived timeline (written by the same reader when the execution hands over) keeps both entries.
    const archived = await eventually('the run archived', async () => {
      const { rows } = await db.query('SELECT timeline FROM run_archives WHERE run_id = $1', [runId]);
      return rows[0]?.timeline as RunView['timeline'] | undefined;
    });
    const approvalEntries = (timeline: RunView['timeline']) => timeline.filter((e) => e.type.startsWith('approval_'));
    expect(approvalEntries(archived)).toEqual(approvalEntries(done.timeline));
    expect(approvalEntries(archived)).toHaveLength(2);
  });

  /** Runs the forged workflow `type` (test/fixtures/forged-approvals.workflow.ts) with `input`; its failure's cause. */
  async function forged(type: string, input: RequestApprovalInput | SettleApprovalInput): Promise<ApplicationFailure> {
    const taskQueue = `forger-${randomUUID()}`;
    const native = await NativeConnection.connect({ address: testEnv('temporalAddress') });
    try {
      const worker = await Worker.create({
        connection: native,
        taskQueue,
        workflowsPath: path.join(fixtures, 'forged-approvals.workflow.js'),
        dataConverter: testDataConverter(),
      });
      const err = await worker.runUntil(() =>
        temporal.workflow
          .execute(type, {
            taskQueue,
            workflowId: `forged-${randomUUID()}`,
            args: [world.stack.env.TEMPORAL_TASK_QUEUE!, input],
          })
          .then(
            () => undefined,
            (e: unknown) => e,
          ),
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const activity = (err as WorkflowFailedError).cause;
      expect(activity).toBeInstanceOf(ActivityFailure);
      return (activity as ActivityFailure).cause as ApplicationFailure;
    } finally {
      await native.close();
    }
  }

  it('denied: no call, the model is told who and why; forged request and settle tasks write nothing; no input in the logs', async () => {
    const { user, agentId, siteId } = await userWithAgent();
    await db.query("UPDATE agents SET approval_scopes = '{write,delete}' WHERE id = $1", [agentId]);
    const title = `Never written ${randomUUID()}`;
    world.model.script(
      (req) => ({
        text: 'Noting it.',
        toolUses: [{ name: toolNamed(req, 'create_note'), input: { title, body: 'b' } }],
      }),
      { text: 'I was not allowed to.' },
    );
    const started = await world.http.post(`/api/agents/${agentId}/runs`, {}, { token: user.token });
    const runId = started.body.id as string;
    const pending = await eventually('the pending approval', async () => {
      const { rows } = await db.query('SELECT id, requested_at, expires_at FROM approvals WHERE run_id = $1', [runId]);
      return rows[0] as { id: string; requested_at: Date; expires_at: Date } | undefined;
    });
    // No timeout in the policy: the default (a day).
    expect(pending.expires_at.getTime() - pending.requested_at.getTime()).toBe(86_400_000);

    // Tasks of another workflow for this run: refused, nothing written.
    const settle: SettleApprovalInput = {
      runId,
      approvalId: pending.id,
      status: 'approved',
      by: { userId: user.id, name: 'Mallory' },
      note: null,
      decidedAt: new Date().toISOString(),
    };
    expect((await forged('forgedSettleApprovalWorkflow', settle)).type).toBe('PERMISSION_DENIED');
    const extra = randomUUID();
    const request: RequestApprovalInput = {
      runId,
      approvalId: extra,
      siteId,
      siteName: 'Reference Notebook',
      tool: 'delete_note',
      input: {},
      scope: 'delete',
      requestedAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
    expect((await forged('forgedRequestApprovalWorkflow', request)).type).toBe('PERMISSION_DENIED');
    expect((await forged('forgedRequestApprovalWorkflow', { ...request, scope: 'read' as never })).type).toBe(
      'VALIDATION_ERROR',
    );
    const { rows: rowsNow } = await db.query('SELECT id, status FROM approvals WHERE run_id = $1', [runId]);
    expect(rowsNow).toEqual([{ id: pending.id, status: 'pending' }]);

    const queue = temporal.workflow.getHandle(workflowIds.agent(agentId));
    await expect(
      queue.executeUpdate(AGENT_HANDLERS.decideApproval, {
        args: [{ runId, approvalId: extra, decision: 'approve', note: null, by: { userId: user.id, name: 'Ada' } }],
      }),
    ).rejects.toMatchObject({ cause: { type: 'VALIDATION_ERROR' } });
    const deny: DecideApprovalInput = {
      runId,
      approvalId: pending.id,
      decision: 'deny',
      note: 'Not this one',
      by: { userId: user.id, name: 'Ada' },
    };
    expect(await queue.executeUpdate(AGENT_HANDLERS.decideApproval, { args: [deny] })).toBe('denied');

    const done = await waitForRun(world.http, user.token, runId);
    expect(done.status).toBe('completed');
    expect(world.site.notesOf('alice').filter((n) => n.title === title)).toEqual([]);
    expect(done.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'approval_requested',
      'approval_decided',
      'model_turn',
      'completed',
    ]);
    expect(done.timeline[3]).toMatchObject({ decision: 'deny', note: 'Not this one', by: { name: 'Ada' } });
    // The model's second turn got the refusal as the tool's result.
    const toolResult = JSON.stringify(world.model.requests.at(-1)?.body.messages.at(-1));
    expect(toolResult).toContain('The call was not approved: denied by Ada: Not this one');
    const { rows: settled } = await db.query('SELECT status, decided_by_name, note FROM approvals WHERE run_id = $1', [
      runId,
    ]);
    expect(settled).toEqual([{ status: 'denied', decided_by_name: 'Ada', note: 'Not this one' }]);
    const logs = world.stack.logs();
    expect(logs).toMatch(
      new RegExp(`approval settle refused for run ${runId}, approval ${pending.id}, asked by workflow forged-`),
    );
    expect(logs).not.toContain(title);
    expect(logs).not.toContain('Not this one');
  });
});
