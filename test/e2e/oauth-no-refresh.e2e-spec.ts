import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { toolNamed, type FakeModel } from '../fixtures/fake-model.js';
import { streamTurn } from '../utils/chat.js';
import { expectError, type Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { approveAtSite, completeOAuth } from '../utils/site.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** The access token's lifetime the site grants: long enough to use it once, short enough to wait out. */
const TTL_SECONDS = 12;
const RECONNECT =
  /^Reference Notebook needs reconnecting: its access expired at \d{4}-\d\d-\d\d \d\d:\d\d UTC and it gave no refresh token$/;

interface Connection {
  status: string;
  expiresAt: string | null;
  refreshable: boolean;
}

/**
 * An OAuth provider that grants an access token without a refresh token: the vault says when the
 * connection ends; past it, the direct call, a chat's tool call and a run's tool call are refused at
 * once with the reconnect message (nothing sent to the site, no refresh tried, no retry), and the
 * vault says it expired.
 */
describe('OAuth connections without a refresh token (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let http: Http;
  let user: TestUser;
  let siteId: string;
  let agentId: string;
  let sessionToken: string;

  beforeAll(async () => {
    world = await startWorld();
    ({ site, model, http } = world);
    site.issueRefreshTokens = false;
    site.accessTokenTtlSeconds = TTL_SECONDS;
    site.allowRedirect('agentsite', `${world.stack.baseUrl}/api/oauth/callback`);
    user = await registerUser(http);
    expect(
      (await http.patch(`/api/admin/users/${user.id}`, { credits: 10_000 }, { token: world.admin.token })).status,
    ).toBe(200);
    const added = await http.post<{ id: string }>('/api/vault/sites', { url: site.url }, { token: user.token });
    expect(added.status).toBe(201);
    siteId = added.body.id;
    const agent = await http.post<{ id: string }>(
      '/api/agents',
      { name: 'Note taker', systemPrompt: 'You keep notes.', siteIds: [siteId], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
    const session = await http.post<{ token: string }>(
      '/api/sessions',
      { sites: [{ siteId }], title: 'Notes' },
      { token: user.token },
    );
    expect(session.status).toBe(201);
    sessionToken = session.body.token;
  }, 120_000);

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  async function connection(): Promise<Connection | undefined> {
    const described = await http.get<{ credential: { connection?: Connection } }>(`/api/vault/sites/${siteId}`, {
      token: user.token,
    });
    expect(described.status).toBe(200);
    return described.body.credential.connection;
  }

  /** What reached the site since `from` (an index of its request log): tool calls and token requests. */
  function requestsSince(from: number): string[] {
    return site.requestLog
      .slice(from)
      .filter((r) => r.path.startsWith('/api/tools/') || r.path.startsWith('/oauth/token'))
      .map((r) => `${r.method} ${r.path}`);
  }

  it('says when the connection ends and that it is not renewed; past it: expired, and every call refused at once', async () => {
    const start = await http.post(`/api/vault/sites/${siteId}/oauth/start`, {}, { token: user.token });
    expect(start.status).toBe(200);
    const callback = await approveAtSite(world.sites.ca, start.body.authorizationUrl);
    const connectedAt = Date.now();
    expect((await completeOAuth(http, callback, user.token)).status).toBe(200);

    const live = await connection();
    expect(live).toMatchObject({ status: 'connected', refreshable: false });
    const expiresAt = Date.parse(live!.expiresAt!);
    expect(expiresAt).toBeGreaterThan(connectedAt);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + TTL_SECONDS * 1000);
    // Until then it works (within a minute of its end too: there is nothing to renew it with).
    const direct = () =>
      http.post(`/api/vault/sites/${siteId}/tools/list_notes/call`, { input: {} }, { token: user.token });
    expect((await direct()).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, Math.max(expiresAt - Date.now(), 0) + 200));
    expect(await connection()).toEqual({ status: 'expired', expiresAt: live!.expiresAt, refreshable: false });

    // The direct call.
    let from = site.requestLog.length;
    const refused = await direct();
    expectError(refused, 'TOOL_EXECUTION_ERROR', 502);
    expect(refused.body.error).toMatch(RECONNECT);
    expect(requestsSince(from)).toEqual([]);

    // A chat turn: the tool's result says so, and the model is told.
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'The notebook needs reconnecting.',
    });
    from = site.requestLog.length;
    const turn = await streamTurn(world.stack.baseUrl, user.token, sessionToken, 'My notes?');
    expect(turn.status).toBe(200);
    const chatResult = turn.events.find((e) => e.event === 'tool_result');
    expect(chatResult?.data).toMatchObject({ ok: false });
    expect(chatResult?.data.error).toMatch(/needs reconnecting: its access expired at .* and it gave no refresh token/);
    expect(requestsSince(from)).toEqual([]);

    // A run: the tool call fails after one attempt (not retried), the run goes on and ends.
    model.reset();
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'Could not read the notes.',
    });
    from = site.requestLog.length;
    const started = await http.post<{ id: string }>(`/api/agents/${agentId}/runs`, {}, { token: user.token });
    expect(started.status).toBe(201);
    const run = await waitForRun(http, user.token, started.body.id);
    expect(run.status).toBe('completed');
    const results = run.timeline.filter((e) => e.type === 'tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_ERROR', attempt: 1 });
    expect(results[0]!.error).toMatch(RECONNECT);
    expect(JSON.stringify(model.requests[1]!.body.messages)).toContain('needs reconnecting');
    expect(requestsSince(from)).toEqual([]);
    expect(await connection()).toMatchObject({ status: 'expired', refreshable: false });
  }, 120_000);
});
