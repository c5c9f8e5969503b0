import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from '../utils/db.js';
import { expectError, type Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';
import { startWorld, type World } from '../utils/world.js';

interface Delivery {
  id: string;
  receivedAt: string;
  outcome: string;
  statusCode: number;
  code: string | null;
  fields: string[];
  requestId: string | null;
  runId: string | null;
}

/** What GET /api/agents/:id/webhook-deliveries keeps of each delivery (names in the API's words). */
describe('webhook deliveries (e2e)', () => {
  let world: World;
  let http: Http;

  beforeAll(async () => {
    world = await startWorld();
    http = world.http;
  });

  afterAll(async () => {
    await world?.stop();
  });

  async function userOn(tier: string): Promise<TestUser> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier, credits: 10_000 }, { token: world.admin.token });
    return user;
  }

  async function webhookAgent(user: TestUser, headers: Record<string, string> = {}) {
    const created = await http.post(
      '/api/agents',
      {
        name: 'Orders',
        systemPrompt: 'Handle the order.',
        siteIds: [],
        trigger: { type: 'webhook', schema: [{ name: 'orderId', type: 'string', required: true }] },
      },
      { token: user.token, headers },
    );
    expect(created.status).toBe(201);
    return created.body as { id: string; webhookSecret: string };
  }

  function fire(agent: { id: string }, secret: string, body: unknown, requestId?: string) {
    return http.post(`/api/webhooks/agent/${agent.id}`, body, {
      headers: { 'x-webhook-secret': secret, ...(requestId ? { 'x-request-id': requestId } : {}) },
    });
  }

  async function deliveries(user: TestUser, agentId: string, query = '', headers: Record<string, string> = {}) {
    return http.get(`/api/agents/${agentId}/webhook-deliveries${query}`, { token: user.token, headers });
  }

  /** The accepted path records its delivery after answering: wait until `count` are listed. */
  async function listed(user: TestUser, agentId: string, count: number): Promise<Delivery[]> {
    for (let tries = 0; ; tries += 1) {
      const page = await deliveries(user, agentId, '?limit=200');
      expect(page.status).toBe(200);
      if (page.body.items.length >= count || tries >= 100) {
        return page.body.items as Delivery[];
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('lists accepted and refused deliveries newest first, and keeps nothing the sender sent', async () => {
    const user = await userOn('harness');
    const agent = await webhookAgent(user);
    const secretRefused = await fire(agent, 'whsec_wrong-secret-value', { orderId: 'o-1' }, 'req-401-aaaaaaaa');
    expectError(secretRefused, 'WEBHOOK_SECRET_INVALID', 401);
    const payloadRefused = await fire(
      agent,
      agent.webhookSecret,
      { orderId: 7, note: 'payload-marker-refused' },
      'req-422-bbbbbbbb',
    );
    expectError(payloadRefused, 'WEBHOOK_PAYLOAD_INVALID', 422);
    const accepted = await fire(agent, agent.webhookSecret, { orderId: 'payload-marker-accepted' }, 'req-202-cccccccc');
    expect(accepted.status).toBe(202);

    const items = await listed(user, agent.id, 3);
    expect(items).toEqual([
      {
        id: expect.any(String),
        receivedAt: expect.any(String),
        outcome: 'accepted',
        statusCode: 202,
        code: null,
        fields: [],
        requestId: 'req-202-cccccccc',
        runId: accepted.body.runId,
      },
      {
        id: expect.any(String),
        receivedAt: expect.any(String),
        outcome: 'refused',
        statusCode: 422,
        code: 'WEBHOOK_PAYLOAD_INVALID',
        fields: ['orderId'],
        requestId: 'req-422-bbbbbbbb',
        runId: null,
      },
      {
        id: expect.any(String),
        receivedAt: expect.any(String),
        outcome: 'refused',
        statusCode: 401,
        code: 'WEBHOOK_SECRET_INVALID',
        fields: [],
        requestId: 'req-401-aaaaaaaa',
        runId: null,
      },
    ]);
    expect(Date.parse(items[0]!.receivedAt)).toBeGreaterThanOrEqual(Date.parse(items[2]!.receivedAt));
    // The accepted delivery's run holds its payload.
    expect((await waitForRun(http, user.token, accepted.body.runId)).payload).toEqual({
      orderId: 'payload-marker-accepted',
    });

    // The rows: these columns and no others, and nothing of the secret, the headers or a payload.
    const columns = await sql<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_deliveries' ORDER BY column_name",
    );
    expect(columns.map((c) => c.column_name)).toEqual([
      'agent_id',
      'code',
      'created_at',
      'duplicate',
      'fields',
      'id',
      'request_id',
      'run_id',
      'status_code',
    ]);
    const rows = await sql<Record<string, unknown>>('SELECT * FROM webhook_deliveries WHERE agent_id = $1', [agent.id]);
    expect(rows).toHaveLength(3);
    const stored = JSON.stringify(rows);
    for (const kept of [agent.webhookSecret, 'whsec_wrong-secret-value', 'payload-marker', 'x-webhook-secret']) {
      expect(stored).not.toContain(kept);
    }
  });

  it("another user's request is AGENT_NOT_FOUND; a workspace viewer may read them; an unknown agent records nothing", async () => {
    const owner = await userOn('team');
    const workspace = (await http.post('/api/workspaces', { name: 'Deliveries' }, { token: owner.token })).body
      .id as string;
    const inWorkspace = { 'x-workspace-id': workspace };
    const agent = await webhookAgent(owner, inWorkspace);
    expectError(await fire(agent, 'whsec_wrong-secret-value', { orderId: 'o' }), 'WEBHOOK_SECRET_INVALID', 401);

    const stranger = await userOn('harness');
    expectError(await deliveries(stranger, agent.id), 'AGENT_NOT_FOUND', 404);
    expectError(await deliveries(stranger, agent.id, '', inWorkspace), 'WORKSPACE_NOT_FOUND', 404);

    const viewer = await registerUser(http);
    await joinWorkspace(http, workspace, owner.token, viewer, 'viewer');
    const asViewer = await deliveries(viewer, agent.id, '', inWorkspace);
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.items.map((d: Delivery) => d.statusCode)).toEqual([401]);

    const before = await sql<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries');
    const unknown = '00000000-0000-4000-8000-0000000000ab';
    expectError(await fire({ id: unknown }, 'whsec_anything', { orderId: 'o' }), 'AGENT_NOT_FOUND', 404);
    expect(await sql<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries')).toEqual(before);
  });

  it('keeps the newest 100 of an agent, pages through them, and leaves other agents their own', async () => {
    const user = await userOn('harness');
    const agent = await webhookAgent(user);
    const other = await webhookAgent(user);
    expectError(await fire(other, 'whsec_wrong-secret-value', { orderId: 'o' }), 'WEBHOOK_SECRET_INVALID', 401);
    const requestIds: string[] = [];
    for (let i = 0; i < 105; i += 1) {
      const requestId = `bound-${String(i).padStart(4, '0')}-dddd`;
      requestIds.push(requestId);
      expectError(
        await fire(agent, 'whsec_wrong-secret-value', { orderId: 'o' }, requestId),
        'WEBHOOK_SECRET_INVALID',
        401,
      );
    }
    const rows = await sql<{ request_id: string }>(
      'SELECT request_id FROM webhook_deliveries WHERE agent_id = $1 ORDER BY created_at DESC, id DESC',
      [agent.id],
    );
    expect(rows).toHaveLength(100);
    expect(new Set(rows.map((r) => r.request_id))).toEqual(new Set(requestIds.slice(5)));

    // Pages of 40, newest first, through the 100 kept.
    const seen: Delivery[] = [];
    let cursor: string | null = null;
    do {
      const page = await deliveries(user, agent.id, `?limit=40${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      seen.push(...(page.body.items as Delivery[]));
      cursor = page.body.nextCursor as string | null;
    } while (cursor !== null);
    expect(seen.map((d) => d.requestId)).toEqual(rows.map((r) => r.request_id));
    expect((await deliveries(user, other.id)).body.items).toHaveLength(1);
    expectError(await deliveries(user, agent.id, '?cursor=nope'), 'VALIDATION_ERROR', 400);
  });
});
