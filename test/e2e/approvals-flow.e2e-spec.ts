import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { toolNamed } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { eventually, type RunView, waitForRun } from '../utils/runs.js';
import { temporalClient } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';
import { AGENT_HANDLERS, type DecideApprovalInput, workflowIds } from '../../workflows/contracts.js';

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
    world = await startWorld();
    ({ client: temporal, connection } = await temporalClient());
    db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
  });

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

    // The archived timeline (written by the same reader before the next run) keeps both entries.
    const archived = await eventually('the run archived', async () => {
      const { rows } = await db.query('SELECT timeline FROM run_archives WHERE run_id = $1', [runId]);
      return rows[0]?.timeline as RunView['timeline'] | undefined;
    });
    const approvalEntries = (timeline: RunView['timeline']) => timeline.filter((e) => e.type.startsWith('approval_'));
    expect(approvalEntries(archived)).toEqual(approvalEntries(done.timeline));
    expect(approvalEntries(archived)).toHaveLength(2);
  });
});
