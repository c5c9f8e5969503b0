import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client, Connection } from '@temporalio/client';
import { expectError } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';
import { startWorld, type World } from '../utils/world.js';
import { temporalClient } from '../utils/temporal.js';

/** Rights that were checked once (at session creation, at agent creation) are checked again at every use. */
describe('access re-checked at every use (e2e)', () => {
  let world: World;
  let connection: Connection;
  let temporal: Client;

  beforeAll(async () => {
    world = await startWorld();
    ({ client: temporal, connection } = await temporalClient());
  });

  afterAll(async () => {
    await connection?.close();
    await world?.stop();
  });

  async function userOn(tier: string): Promise<TestUser> {
    const user = await registerUser(world.http);
    await world.http.patch(`/api/admin/users/${user.id}`, { tier, credits: 100_000 }, { token: world.admin.token });
    return user;
  }

  it("a workspace chat session follows its user's membership: demoted to viewer or removed, the next turn is refused", async () => {
    const { http, model } = world;
    const owner = await userOn('team');
    const member = await registerUser(http);
    await http.patch(`/api/admin/users/${member.id}`, { credits: 100_000 }, { token: world.admin.token });
    const ws = (await http.post('/api/workspaces', { name: 'Chat' }, { token: owner.token })).body.id as string;
    await joinWorkspace(http, ws, owner.token, member, 'member');
    const inWs = (token: string) => ({ token, headers: { 'x-workspace-id': ws } });
    const siteId = (await http.post('/api/vault/sites', { url: world.site.url }, inWs(owner.token))).body.id as string;
    const created = await http.post('/api/sessions', { sites: [{ siteId }] }, inWs(member.token));
    expect(created.status).toBe(201);
    const session = created.body.token as string;
    const turn = () => http.post(`/api/sessions/${session}/messages`, { content: 'hello' }, { token: member.token });

    expect((await turn()).status).toBe(200);
    const calls = model.requests.length;

    // Demoted to viewer: viewers may read agents and runs, not chat with the workspace's tools.
    await http.patch(`/api/workspaces/${ws}/members/${member.id}`, { role: 'viewer' }, { token: owner.token });
    const asViewer = await turn();
    expectError(asViewer, 'PERMISSION_DENIED', 403);
    expect(asViewer.body.error).toMatch(/member role/);
    const streamed = await http.post(
      `/api/sessions/${session}/messages`,
      { content: 'hello' },
      { token: member.token, headers: { accept: 'text/event-stream' } },
    );
    expectError(streamed, 'PERMISSION_DENIED', 403);
    // ... but may still read (and delete) their own session.
    expect((await http.get(`/api/sessions/${session}`, { token: member.token })).status).toBe(200);

    // The check reads the role as it is now, both ways.
    await http.patch(`/api/workspaces/${ws}/members/${member.id}`, { role: 'member' }, { token: owner.token });
    expect((await turn()).status).toBe(200);
    const callsAfterPromotion = model.requests.length;
    expect(callsAfterPromotion).toBeGreaterThan(calls);

    // Removed: nothing of the session is usable any more, and the model is never called.
    expect((await http.delete(`/api/workspaces/${ws}/members/${member.id}`, { token: owner.token })).status).toBe(204);
    const removed = await turn();
    expectError(removed, 'PERMISSION_DENIED', 403);
    expect(removed.body.error).toMatch(/no longer a member/);
    expectError(await http.get(`/api/sessions/${session}`, { token: member.token }), 'PERMISSION_DENIED', 403);
    expectError(await http.delete(`/api/sessions/${session}`, { token: member.token }), 'PERMISSION_DENIED', 403);
    expect(model.requests.length).toBe(callsAfterPromotion);

    // The owner's own workspace session stops with the owner's Team plan, as X-Workspace-Id does.
    const own = (await http.post('/api/sessions', { sites: [{ siteId }] }, inWs(owner.token))).body.token as string;
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'pro' }, { token: world.admin.token });
    expectError(
      await http.post(`/api/sessions/${own}/messages`, { content: 'hi' }, { token: owner.token }),
      'WORKSPACE_REQUIRED',
      403,
    );
    expect(model.requests.length).toBe(callsAfterPromotion);
  });

  it('a schedule of a user downgraded to free fires into a failed run with TIER_REQUIRED; the model is not called', async () => {
    const { http, model } = world;
    const user = await userOn('pro');
    const agent = (
      await http.post(
        '/api/agents',
        { name: 'nightly', systemPrompt: 'p', siteIds: [], trigger: { type: 'scheduled', cron: '0 3 1 1 *' } },
        { token: user.token },
      )
    ).body as { id: string };
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'free' }, { token: world.admin.token });
    const calls = model.requests.length;

    await temporal.schedule.getHandle(`schedule-${agent.id}`).trigger();
    const runs = await eventually('the scheduled firing to be recorded', async () => {
      const list = await http.get(`/api/agents/${agent.id}/runs`, { token: user.token });
      return list.body.items.length > 0 ? (list.body.items as Array<{ id: string }>) : undefined;
    });
    const run = await waitForRun(http, user.token, runs[0]!.id);
    expect(run).toMatchObject({ status: 'failed', triggeredBy: 'schedule', error: { code: 'TIER_REQUIRED' } });
    expect(run.timeline.map((e) => e.type)).toEqual(['triggered', 'failed']);
    expect(run.timeline[1]).toMatchObject({ type: 'failed', code: 'TIER_REQUIRED' });
    expect(run.timeline[1]!.error).toMatch(/higher tier than free/);
    expect(run.usage.credits).toBe(0);
    expect(model.requests.length).toBe(calls);
  });
});
