import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { toolNamed, type FakeModel } from '../fixtures/fake-model.js';
import { streamTurn } from '../utils/chat.js';
import { expectError, type Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

const NOT_CONNECTED = 'Reference Notebook is not connected: store a token or connect it';

/**
 * A tool call to a site with no stored credential (never connected, or its token removed) is answered
 * by the service itself, before anything is sent: the direct call, a chat's tool call and a run's tool
 * call all say that the site is not connected, and the site's request log shows no tool request.
 */
describe('tool calls to a site that is not connected (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let http: Http;

  beforeAll(async () => {
    world = await startWorld();
    ({ site, model, http } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  /** A new user with the reference site in the vault and no credential for it. */
  async function userWithBareSite(): Promise<{ user: TestUser; siteId: string }> {
    const user = await registerUser(http);
    // Credits for the chat turns and runs.
    expect(
      (await http.patch(`/api/admin/users/${user.id}`, { credits: 10_000 }, { token: world.admin.token })).status,
    ).toBe(200);
    const added = await http.post<{ id: string }>('/api/vault/sites', { url: site.url }, { token: user.token });
    expect(added.status).toBe(201);
    return { user, siteId: added.body.id };
  }

  /** The requests that reached the site's tool endpoints since `from` (an index of its request log). */
  function toolRequestsSince(from: number): string[] {
    return site.requestLog
      .slice(from)
      .filter((r) => r.path.startsWith('/api/tools/'))
      .map((r) => `${r.method} ${r.path}`);
  }

  it('the direct call says the site is not connected and sends nothing, also after the token was removed', async () => {
    const { user, siteId } = await userWithBareSite();
    const from = site.requestLog.length;
    const never = await http.post(
      `/api/vault/sites/${siteId}/tools/list_notes/call`,
      { input: {} },
      { token: user.token },
    );
    expectError(never, 'TOOL_EXECUTION_ERROR', 502);
    expect(never.body.error).toBe(NOT_CONNECTED);

    const token = site.issueApiToken('alice').token;
    expect((await http.post(`/api/vault/sites/${siteId}/token`, { token }, { token: user.token })).status).toBe(201);
    expect((await http.delete(`/api/vault/sites/${siteId}/token`, { token: user.token })).status).toBe(204);
    const removed = await http.post(
      `/api/vault/sites/${siteId}/tools/create_note/call`,
      { input: { title: 'x', body: 'y' } },
      { token: user.token },
    );
    expectError(removed, 'TOOL_EXECUTION_ERROR', 502);
    expect(removed.body.error).toBe(NOT_CONNECTED);
    expect(toolRequestsSince(from)).toEqual([]);
  });

  it("a chat's tool call gets the same message as the tool's error, and the site is not called", async () => {
    const { user, siteId } = await userWithBareSite();
    const session = await http.post<{ token: string }>(
      '/api/sessions',
      { sites: [{ siteId }], title: 'Notes' },
      { token: user.token },
    );
    expect(session.status).toBe(201);
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'The notebook is not connected.',
    });
    const from = site.requestLog.length;
    const { status, events } = await streamTurn(world.stack.baseUrl, user.token, session.body.token, 'My notes?');
    expect(status).toBe(200);
    const result = events.find((e) => e.event === 'tool_result');
    expect(result?.data).toMatchObject({ ok: false });
    expect(result?.data.error).toContain(NOT_CONNECTED);
    // The model was told why, as the tool's result.
    expect(JSON.stringify(model.requests[1]!.body.messages)).toContain(NOT_CONNECTED);
    expect(toolRequestsSince(from)).toEqual([]);
  });

  it("a run's tool call fails with the same message, the run goes on, and the site is not called", async () => {
    const { user, siteId } = await userWithBareSite();
    const agent = await http.post<{ id: string }>(
      '/api/agents',
      { name: 'Note taker', systemPrompt: 'You keep notes.', siteIds: [siteId], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'Could not read the notes.',
    });
    const from = site.requestLog.length;
    const started = await http.post<{ id: string }>(`/api/agents/${agent.body.id}/runs`, {}, { token: user.token });
    expect(started.status).toBe(201);
    const run = await waitForRun(http, user.token, started.body.id);
    expect(run.status).toBe('completed');
    const result = run.timeline.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_ERROR', attempt: 1 });
    expect(result!.error).toContain(NOT_CONNECTED);
    expect(JSON.stringify(model.requests[1]!.body.messages)).toContain(NOT_CONNECTED);
    expect(toolRequestsSince(from)).toEqual([]);
  });
});
