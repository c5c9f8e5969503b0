import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type FakeModel } from '../fixtures/fake-model.js';
import { type Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { sql } from '../utils/db.js';

/**
 * A run row left `queued` by an API process that died between its insert and its update to the agent's
 * queue workflow (the update never got through): not a run, and it must not stand in the way.
 */
describe('runs whose start never reached Temporal (e2e)', () => {
  let model: FakeModel;
  let http: Http;
  let world: World;

  beforeAll(async () => {
    world = await startWorld({});
    ({ model, http } = world);
  });

  beforeEach(() => {
    model.reset();
  });

  afterAll(async () => {
    await world?.stop();
  });

  async function manualAgent(user: TestUser): Promise<{ id: string }> {
    const created = await http.post(
      '/api/agents',
      { name: 'Stuck', systemPrompt: 'You keep notes.', siteIds: [], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(created.status).toBe(201);
    return created.body;
  }

  /** The row a dead API left: inserted, its update never accepted. */
  async function staleRow(agentId: string, userId: string, ageSeconds: number, deliveryId: string | null = null) {
    const id = randomUUID();
    await sql(
      `INSERT INTO runs (id, agent_id, user_id, status, triggered_by, input, system_prompt_source, delivery_id,
         workflow_id, usage, queued_at)
       VALUES ($1, $2, $3, 'queued', $4, NULL, 'agent', $5, $6, '{"inputTokens":0,"outputTokens":0,"credits":0}',
         now() - make_interval(secs => $7))`,
      [id, agentId, userId, deliveryId === null ? 'manual' : 'webhook', deliveryId, `agent-${agentId}`, ageSeconds],
    );
    return id;
  }

  it("a manual start deletes the agent's stale queued row (older than 2 minutes, not held by the queue), and runs", async () => {
    const user = await registerUser(http);
    const agent = await manualAgent(user);
    const stale = await staleRow(agent.id, user.id, 300);
    // Kept: a row whose start may still be on its way, and a webhook's row (its sender redelivers).
    const young = await staleRow(agent.id, user.id, 10);
    const webhook = await staleRow(agent.id, user.id, 300, 'delivery-1');
    model.script({ text: 'done' });
    const started = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
    expect(started.status).toBe(201);
    const run = await waitForRun(http, user.token, started.body.id);
    expect(run.status).toBe('completed');
    const list = await http.get(`/api/agents/${agent.id}/runs`, { token: user.token });
    const listed = list.body.items.map((r: { id: string; status: string }) => [r.id, r.status]);
    expect(listed).toContainEqual([started.body.id, 'completed']);
    expect(listed.map(([id]: [string]) => id)).not.toContain(stale);
    const left = await sql<{ id: string }>('SELECT id FROM runs WHERE agent_id = $1 AND status = $2 ORDER BY id', [
      agent.id,
      'queued',
    ]);
    expect(left.map((r) => r.id)).toEqual([young, webhook].sort());
  });
});
