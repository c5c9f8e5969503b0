import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { ReferenceSite } from '../../examples/site/site.js';
import { freePort, stopChild } from '../../scripts/runtime/processes.js';
import { type FakeModel, type RecordedRequest, toolNamed } from '../fixtures/fake-model.js';
import { expectError, Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { apiListening, type Stack } from '../utils/stack.js';
import { connectSite, registerUser, registerUserWith, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';
import { startWorld, type World } from '../utils/world.js';

/**
 * Approvals (issue 39): a run whose agent lists a tool's scope waits, before that call, for a person's
 * decision, durably (worker and API restarts), decided through the API by members and up; the inbox
 * lists what waits. The workflow's own cases (timeout, several waits, the queue behind a waiting run)
 * are in test/workflows/approvals.workflow-spec.ts.
 */
describe('approvals (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000' } });
    ({ site, model, stack, http, admin } = world);
  });

  beforeEach(() => {
    model.reset();
  });

  afterAll(async () => {
    await world?.stop();
  });

  type As = { token: string; headers?: Record<string, string> };

  /** A user of the tier with the reference site in the vault (of the workspace, with `workspaceId`). */
  async function userWithSite(tier = 'harness', workspace?: (user: TestUser) => Promise<string>) {
    const user = await registerUserWith(http, admin, { tier, credits: 100_000 });
    const workspaceId = workspace === undefined ? undefined : await workspace(user);
    const as: As = {
      token: user.token,
      ...(workspaceId !== undefined ? { headers: { 'x-workspace-id': workspaceId } } : {}),
    };
    return { user, siteId: await connectSite(http, as, site), as, workspaceId };
  }

  async function approvalAgent(as: As, siteId: string, approvals: unknown = { scopes: ['write', 'delete'] }) {
    const created = await http.post(
      '/api/agents',
      {
        name: 'Careful notes',
        systemPrompt: 'You keep notes.',
        siteIds: [siteId],
        trigger: { type: 'manual' },
        approvals,
      },
      as,
    );
    expect(created.status).toBe(201);
    return created.body as { id: string; approvals: unknown };
  }

  /**
   * Starts a run whose first turn creates a note titled `title` (a write: it waits), the second answers
   * `answer`; resolves once the run shows what it waits on.
   */
  async function waitingRun(as: As, agentId: string, title: string, answer = 'Noted.') {
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title, body: 'b' } }] }), {
      text: answer,
    });
    const started = await http.post(`/api/agents/${agentId}/runs`, { input: `Note ${title}` }, as);
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    const run = await eventually(`run ${runId} to wait for a decision`, async () => {
      const res = await http.get(`/api/runs/${runId}`, as);
      return res.body.awaiting !== null && res.body.awaiting !== undefined ? res.body : undefined;
    });
    return { runId, approvalId: run.awaiting.approvalId as string, run };
  }

  const notesTitled = (title: string) => site.notesOf('alice').filter((n) => n.title === title);

  /** A second API process on the suite's stack (same settings and database, another port). */
  async function secondApi(): Promise<{ http: Http; stop: () => Promise<void> }> {
    const port = await freePort();
    const proc = stack.spawn('api-2', 'src/main.js', { PORT: String(port) });
    const second = new Http(`http://127.0.0.1:${port}`);
    try {
      await eventually(
        'the second API to answer',
        async () =>
          existsSync(proc.logFile) && apiListening(proc) && (await second.get('/api/health/ready')).status === 200
            ? true
            : undefined,
        60_000,
      );
    } catch (err) {
      await stopChild(proc.child);
      throw err;
    }
    return { http: second, stop: () => stopChild(proc.child) };
  }

  it('agent policy and notify fields: validated, shown, the notify secret once and rotatable', async () => {
    const { as, siteId } = await userWithSite();
    const refused = await http.post(
      '/api/agents',
      {
        name: 'n',
        systemPrompt: 'p',
        siteIds: [siteId],
        trigger: { type: 'manual' },
        approvals: { scopes: ['write', 'write'], timeoutSeconds: 30 },
        notify: { url: 'http://hooks.example.com/in', events: [] },
      },
      as,
    );
    expectError(refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'approvals.scopes',
      'approvals.timeoutSeconds',
      'notify.events',
    ]);
    const insecure = await http.post(
      '/api/agents',
      {
        name: 'n',
        systemPrompt: 'p',
        siteIds: [],
        trigger: { type: 'manual' },
        notify: { url: 'http://hooks.example.com/in', events: ['run_failed'] },
      },
      as,
    );
    expectError(insecure, 'VALIDATION_ERROR', 400);
    expect(insecure.body.details).toEqual([{ field: 'notify.url', message: 'must use https://' }]);
    const privateAddress = await http.post(
      '/api/agents',
      {
        name: 'n',
        systemPrompt: 'p',
        siteIds: [],
        trigger: { type: 'manual' },
        notify: { url: 'https://10.1.2.3/in', events: ['run_failed'] },
      },
      as,
    );
    expectError(privateAddress, 'VALIDATION_ERROR', 400);
    expect(privateAddress.body.details[0].field).toBe('notify.url');

    const plain = await approvalAgent(as, siteId, null);
    expect(plain.approvals).toBeNull();
    expectError(
      await http.post(`/api/agents/${plain.id}/notify-secret/rotate`, undefined, as),
      'VALIDATION_ERROR',
      400,
    );
    const withNotify = await http.patch(
      `/api/agents/${plain.id}`,
      {
        approvals: { scopes: ['admin'] },
        notify: { url: 'https://hooks.example.com/in', events: ['approval_requested'] },
      },
      as,
    );
    expect(withNotify.status).toBe(200);
    expect(withNotify.body).toMatchObject({
      approvals: { scopes: ['admin'], timeoutSeconds: 86_400 },
      notify: { url: 'https://hooks.example.com/in', events: ['approval_requested'] },
    });
    expect(withNotify.body.notifySecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // Shown once: neither a read nor a later change shows it again.
    const read = await http.get(`/api/agents/${plain.id}`, as);
    expect(read.body.notifySecret).toBeUndefined();
    expect(JSON.stringify(read.body)).not.toContain(withNotify.body.notifySecret.slice(6));
    const changed = await http.patch(
      `/api/agents/${plain.id}`,
      { notify: { url: 'https://hooks.example.com/b', events: ['run_failed', 'run_completed'] } },
      as,
    );
    expect(changed.body.notifySecret).toBeUndefined();
    expect(changed.body.notify).toEqual({
      url: 'https://hooks.example.com/b',
      events: ['run_failed', 'run_completed'],
    });
    const rotated = await http.post(`/api/agents/${plain.id}/notify-secret/rotate`, undefined, as);
    expect(rotated.status).toBe(200);
    expect(rotated.body.notifySecret).toMatch(/^whsec_/);
    expect(rotated.body.notifySecret).not.toBe(withNotify.body.notifySecret);
    // null removes both; the secret goes with notify (a later notify gets a new one).
    const cleared = await http.patch(`/api/agents/${plain.id}`, { approvals: null, notify: null }, as);
    expect(cleared.body).toMatchObject({ approvals: null, notify: null });
    expectError(
      await http.post(`/api/agents/${plain.id}/notify-secret/rotate`, undefined, as),
      'VALIDATION_ERROR',
      400,
    );
    expect((await http.patch(`/api/agents/${plain.id}`, { approvals: { scopes: [] } }, as)).body.approvals).toBeNull();
    // Another user's agent is not found.
    const stranger = await registerUser(http);
    expectError(
      await http.post(`/api/agents/${plain.id}/notify-secret/rotate`, undefined, { token: stranger.token }),
      'AGENT_NOT_FOUND',
      404,
    );
  });

  it('a run waits across a worker SIGKILL and an API restart, is approved through a second API process, and the site saw one call', async () => {
    const { as, siteId } = await userWithSite();
    const agent = await approvalAgent(as, siteId);
    const calls = site.stats.toolCalls;
    const { runId, approvalId, run } = await waitingRun(as, agent.id, 'Durable wait');
    expect(run.status).toBe('active');
    expect(run.awaiting).toEqual({
      approvalId,
      site: 'Reference Notebook',
      tool: 'create_note',
      scope: 'write',
      expiresAt: expect.any(String),
    });
    expect(Date.parse(run.awaiting.expiresAt) - Date.now()).toBeGreaterThan(86_000_000);

    stack.worker!.child.kill('SIGKILL');
    await stopChild(stack.worker!.child);
    stack.worker = stack.spawn('worker', 'src/worker.js');
    await stack.restartApi();
    await stack.waitHealthy(true);
    const after = await http.get(`/api/runs/${runId}`, as);
    expect(after.body).toMatchObject({ status: 'active', awaiting: { approvalId } });
    expect(site.stats.toolCalls).toBe(calls);

    const second = await secondApi();
    try {
      const decided = await second.http.post(`/api/runs/${runId}/approvals/${approvalId}`, { decision: 'approve' }, as);
      expect(decided.status).toBe(200);
      expect(decided.body.id).toBe(runId);
      expect(decided.body.awaiting).toBeNull();
    } finally {
      await second.stop();
    }
    const done = await waitForRun(http, as.token, runId, undefined, 90_000).catch((err: unknown) => {
      throw stack.explain(err, runId);
    });
    expect(done.status).toBe('completed');
    expect(site.stats.toolCalls - calls).toBe(1);
    expect(notesTitled('Durable wait')).toHaveLength(1);
    const types = done.timeline.map((e) => e.type);
    expect(types.indexOf('approval_requested')).toBeLessThan(types.indexOf('approval_decided'));
    expect(types.indexOf('approval_decided')).toBeLessThan(types.indexOf('tool_call'));
    expect(done.timeline.find((e) => e.type === 'approval_decided')).toMatchObject({
      approvalId,
      decision: 'approve',
      by: { userId: expect.any(String) },
    });
    // Past the 90 s wait above: a slow recovery fails with the run's last view and the stack's lines about it.
  }, 150_000);

  it("in a workspace a viewer cannot rotate an agent's notification signing secret (PERMISSION_DENIED); a member can", async () => {
    const { as: asOwner, workspaceId } = await userWithSite('team', async (owner) => {
      const res = await http.post('/api/workspaces', { name: 'Signing secrets' }, { token: owner.token });
      return res.body.id as string;
    });
    const viewer = await registerUser(http);
    const member = await registerUser(http);
    await joinWorkspace(http, workspaceId!, asOwner.token, viewer, 'viewer');
    await joinWorkspace(http, workspaceId!, asOwner.token, member, 'member');
    const inWs = (user: TestUser): As => ({ token: user.token, headers: { 'x-workspace-id': workspaceId! } });
    const created = await http.post(
      '/api/agents',
      {
        name: 'Notifies',
        systemPrompt: 'p',
        siteIds: [],
        trigger: { type: 'manual' },
        notify: { url: 'https://hooks.example.com/in', events: ['run_failed'] },
      },
      asOwner,
    );
    expect(created.status).toBe(201);
    expect(created.body.notifySecret).toMatch(/^whsec_/);
    const agentId = created.body.id as string;
    // The viewer reads the agent and its notifications, but may not replace the secret.
    expect((await http.get(`/api/agents/${agentId}`, inWs(viewer))).body.notify).toEqual({
      url: 'https://hooks.example.com/in',
      events: ['run_failed'],
    });
    const refused = await http.post(`/api/agents/${agentId}/notify-secret/rotate`, undefined, inWs(viewer));
    expectError(refused, 'PERMISSION_DENIED', 403);
    expect(refused.body.notifySecret).toBeUndefined();
    const rotated = await http.post(`/api/agents/${agentId}/notify-secret/rotate`, undefined, inWs(member));
    expect(rotated.status).toBe(200);
    expect(rotated.body.notifySecret).toMatch(/^whsec_/);
    expect(rotated.body.notifySecret).not.toBe(created.body.notifySecret);
  });

  it('in a workspace a viewer sees the approval but cannot decide; a member approves', async () => {
    const {
      as: asOwner,
      siteId,
      workspaceId,
    } = await userWithSite('team', async (owner) => {
      const res = await http.post('/api/workspaces', { name: 'Approvals' }, { token: owner.token });
      return res.body.id as string;
    });
    const viewer = await registerUser(http);
    const member = await registerUser(http);
    await joinWorkspace(http, workspaceId!, asOwner.token, viewer, 'viewer');
    await joinWorkspace(http, workspaceId!, asOwner.token, member, 'member');
    const inWs = (user: TestUser): As => ({ token: user.token, headers: { 'x-workspace-id': workspaceId! } });
    const agent = await approvalAgent(asOwner, siteId);
    const calls = site.stats.toolCalls;
    const { runId, approvalId } = await waitingRun(asOwner, agent.id, 'Team note');

    const seen = await http.get('/api/approvals?status=pending', inWs(viewer));
    expect(seen.status).toBe(200);
    expect(seen.body.items.map((a: { id: string }) => a.id)).toContain(approvalId);
    const refused = await http.post(
      `/api/runs/${runId}/approvals/${approvalId}`,
      { decision: 'approve' },
      inWs(viewer),
    );
    expectError(refused, 'PERMISSION_DENIED', 403);
    const still = await http.get(`/api/runs/${runId}`, inWs(viewer));
    expect(still.body).toMatchObject({ status: 'active', awaiting: { approvalId } });
    expect(site.stats.toolCalls).toBe(calls);
    // Outside the workspace (personal scope) the viewer sees none of it.
    expect((await http.get('/api/approvals', { token: viewer.token })).body.items).toEqual([]);

    const accepted = await http.post(
      `/api/runs/${runId}/approvals/${approvalId}`,
      { decision: 'approve', note: 'Fine' },
      inWs(member),
    );
    expect(accepted.status).toBe(200);
    // A workspace run is read in the workspace (waitForRun reads the personal scope).
    const done = await eventually(
      'the run to complete',
      async () => {
        const res = await http.get(`/api/runs/${runId}`, inWs(member));
        return ['completed', 'failed', 'cancelled'].includes(res.body.status) ? res.body : undefined;
      },
      60_000,
    );
    expect(done.status).toBe('completed');
    expect(site.stats.toolCalls - calls).toBe(1);
    const decided = (await http.get('/api/approvals?status=approved', inWs(viewer))).body.items.find(
      (a: { id: string }) => a.id === approvalId,
    );
    expect(decided).toMatchObject({
      status: 'approved',
      decidedBy: { userId: member.id, name: member.email },
      note: 'Fine',
    });
  });

  it('deny with a note: the model gets the refusal and the note as the tool result, the site no call, the run completes', async () => {
    const { as, siteId } = await userWithSite();
    const agent = await approvalAgent(as, siteId);
    const calls = site.stats.toolCalls;
    const { runId, approvalId } = await waitingRun(as, agent.id, 'Denied note', 'Understood, not created.');
    const before = model.requests.length;
    const denied = await http.post(
      `/api/runs/${runId}/approvals/${approvalId}`,
      { decision: 'deny', note: 'Not on Fridays' },
      as,
    );
    expect(denied.status).toBe(200);
    const done = await waitForRun(http, as.token, runId);
    expect(done.status).toBe('completed');
    expect(site.stats.toolCalls).toBe(calls);
    expect(notesTitled('Denied note')).toHaveLength(0);
    const next: RecordedRequest = model.requests[before]!;
    const last = next.body.messages[next.body.messages.length - 1]!;
    const result = (last.content as Array<Record<string, unknown>>).find((b) => b.type === 'tool_result')!;
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/not approved/);
    expect(JSON.stringify(result.content)).toContain('Not on Fridays');
    expect(done.timeline.find((e) => e.type === 'approval_decided')).toMatchObject({
      decision: 'deny',
      note: 'Not on Fridays',
    });
    expect(done.timeline.at(-1)).toMatchObject({ type: 'completed', output: 'Understood, not created.' });
  });

  it('refuses: an unknown approval, bad bodies, another user’s run, a second decision', async () => {
    const { user, as, siteId } = await userWithSite();
    const agent = await approvalAgent(as, siteId);
    const { runId, approvalId } = await waitingRun(as, agent.id, 'Refusals');
    const decide = (id: string, body: unknown, who: As = as) =>
      http.request('POST', `/api/runs/${runId}/approvals/${id}`, {
        ...who,
        rawBody: body === undefined ? undefined : JSON.stringify(body),
        headers: { ...who.headers, 'content-type': 'application/json' },
      });
    const unknown = await decide(randomUUID(), { decision: 'approve' });
    expectError(unknown, 'VALIDATION_ERROR', 400);
    expect(unknown.body.details.map((d: { field: string }) => d.field)).toEqual(['approvalId']);
    expectError(await decide('not-an-id', { decision: 'approve' }), 'VALIDATION_ERROR', 400);
    for (const [body, field] of [
      [null, 'body'],
      [[], 'body'],
      [{}, 'decision'],
      [{ decision: null }, 'decision'],
      [{ decision: 'maybe' }, 'decision'],
      [{ decision: 1 }, 'decision'],
      [{ decision: 'approve', note: 5 }, 'note'],
      [{ decision: 'approve', note: 'x'.repeat(1001) }, 'note'],
      [{ decision: 'approve', by: { userId: user.id, name: 'Someone else' } }, 'by'],
    ] as Array<[unknown, string]>) {
      const res = await decide(approvalId, body);
      expectError(res, 'VALIDATION_ERROR', 400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const stranger = await registerUser(http);
    expectError(await decide(approvalId, { decision: 'approve' }, { token: stranger.token }), 'RUN_NOT_FOUND', 404);
    expectError(
      await http.post(`/api/runs/${randomUUID()}/approvals/${approvalId}`, { decision: 'approve' }, as),
      'RUN_NOT_FOUND',
      404,
    );
    // None of it changed the wait.
    expect((await http.get(`/api/runs/${runId}`, as)).body).toMatchObject({
      status: 'active',
      awaiting: { approvalId },
    });

    expect((await decide(approvalId, { decision: 'approve', note: null })).status).toBe(200);
    const again = await decide(approvalId, { decision: 'deny' });
    expectError(again, 'VALIDATION_ERROR', 400);
    expect(again.body.details.map((d: { field: string }) => d.field)).toEqual(['approvalId']);
    expect((await waitForRun(http, as.token, runId)).status).toBe('completed');
    expect(notesTitled('Refusals')).toHaveLength(1);
  });

  it('cancel while waiting: the run ends cancelled, the approval is cancelled, the site saw no call', async () => {
    const { as, siteId } = await userWithSite();
    const agent = await approvalAgent(as, siteId);
    const calls = site.stats.toolCalls;
    const { runId, approvalId } = await waitingRun(as, agent.id, 'Cancelled note');
    const cancelled = await http.post(`/api/runs/${runId}/cancel`, undefined, as);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', awaiting: null });
    const row = await eventually('the approval to be cancelled', async () => {
      const list = await http.get('/api/approvals?status=cancelled', as);
      return list.body.items.find((a: { id: string }) => a.id === approvalId);
    });
    expect(row).toMatchObject({ status: 'cancelled', decidedBy: null });
    expect((await http.get('/api/approvals?status=pending', as)).body.items).toEqual([]);
    expectError(
      await http.post(`/api/runs/${runId}/approvals/${approvalId}`, { decision: 'approve' }, as),
      'VALIDATION_ERROR',
      400,
    );
    expect(site.stats.toolCalls).toBe(calls);
    expect(notesTitled('Cancelled note')).toHaveLength(0);
  });

  it('the inbox lists a pending approval with its agent, site, tool and input, newest first, and drops it once decided', async () => {
    const { user, as, siteId } = await userWithSite();
    const agent = await approvalAgent(as, siteId);
    const { runId, approvalId } = await waitingRun(as, agent.id, 'Inbox note');
    const pending = await http.get('/api/approvals?status=pending', as);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      items: [
        {
          id: approvalId,
          runId,
          agentId: agent.id,
          agentName: 'Careful notes',
          site: 'Reference Notebook',
          siteId,
          tool: 'create_note',
          input: { title: 'Inbox note', body: 'b' },
          scope: 'write',
          requestedAt: expect.any(String),
          expiresAt: expect.any(String),
          status: 'pending',
          decidedAt: null,
          decidedBy: null,
          note: null,
        },
      ],
      nextCursor: null,
    });
    // Another user's inbox does not show it; a bad filter or cursor is refused.
    const stranger = await registerUser(http);
    expect((await http.get('/api/approvals?status=pending', { token: stranger.token })).body.items).toEqual([]);
    expectError(await http.get('/api/approvals?status=waiting', as), 'VALIDATION_ERROR', 400);
    expectError(await http.get('/api/approvals?cursor=abc', as), 'VALIDATION_ERROR', 400);

    expect((await http.post(`/api/runs/${runId}/approvals/${approvalId}`, { decision: 'approve' }, as)).status).toBe(
      200,
    );
    expect((await http.get('/api/approvals?status=pending', as)).body.items).toEqual([]);
    const all = await http.get('/api/approvals?limit=1', as);
    expect(all.body.items).toEqual([
      expect.objectContaining({ id: approvalId, status: 'approved', decidedBy: { userId: user.id, name: user.email } }),
    ]);
    expect((await waitForRun(http, as.token, runId)).status).toBe('completed');

    // Newest first, a page at a time.
    const second = await waitingRun(as, agent.id, 'Inbox note 2');
    const first = await http.get('/api/approvals?limit=1', as);
    expect(first.body.items.map((a: { id: string }) => a.id)).toEqual([second.approvalId]);
    const next = await http.get(`/api/approvals?limit=1&cursor=${first.body.nextCursor}`, as);
    expect(next.body.items.map((a: { id: string }) => a.id)).toEqual([approvalId]);
    expect(
      (await http.post(`/api/runs/${second.runId}/approvals/${second.approvalId}`, { decision: 'deny' }, as)).status,
    ).toBe(200);
    expect((await waitForRun(http, as.token, second.runId)).status).toBe('completed');
  });
});
