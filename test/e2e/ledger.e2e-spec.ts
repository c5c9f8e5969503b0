import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';

interface Entry {
  id: string;
  amount: number;
  reason: string;
  balanceAfter: number;
  runId: string | null;
  tierChange: { from: string; to: string } | null;
  createdAt: string;
}

describe('the credit ledger: GET /api/billing/ledger (e2e)', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld();
  });

  afterAll(async () => {
    await world?.stop();
  });

  async function ledger(user: TestUser, query = ''): Promise<{ items: Entry[]; nextCursor: string | null }> {
    const answer = await world.http.get(`/api/billing/ledger${query}`, { token: user.token });
    expect(answer.status).toBe(200);
    return answer.body;
  }

  async function balance(user: TestUser): Promise<number> {
    return (await world.http.get('/api/billing', { token: user.token })).body.credits;
  }

  it('starts with the signup grant; a purchase and a chat charge appear newest first, adding up to the balance', async () => {
    const { http, site, model } = world;
    const user = await registerUser(http);
    const opening = await ledger(user);
    expect(opening.nextCursor).toBeNull();
    expect(opening.items).toEqual([
      {
        id: expect.any(String),
        amount: 100,
        reason: 'signup_grant',
        balanceAfter: 100,
        runId: null,
        tierChange: null,
        createdAt: expect.any(String),
      },
    ]);

    await http.post('/api/billing/payment-method', { paymentMethodToken: 'tok_visa' }, { token: user.token });
    const bought = await http.post('/api/billing/credits/purchase', { amount: 250 }, { token: user.token });
    expect(bought.body).toMatchObject({ credits: 350, purchase: { credits: 250, status: 'succeeded' } });
    expect((await ledger(user)).items[0]).toMatchObject({ amount: 250, reason: 'purchase', balanceAfter: 350 });

    // A chat reply's model turn: 1,200 tokens cost 2 credits.
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id;
    await http.post(
      `/api/vault/sites/${siteId}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const session = await http.post('/api/sessions', { sites: [{ siteId }] }, { token: user.token });
    model.script({ text: 'Hello.', usage: { input_tokens: 1000, output_tokens: 200 } });
    const reply = await http.post(
      `/api/sessions/${session.body.token}/messages`,
      { content: 'Hi' },
      { token: user.token },
    );
    expect(reply.status).toBe(200);

    const after = await ledger(user);
    expect(after.items.map((e) => [e.reason, e.amount, e.balanceAfter])).toEqual([
      ['chat_turn', -2, 348],
      ['purchase', 250, 350],
      ['signup_grant', 100, 100],
    ]);
    expect(after.items.every((e) => e.runId === null)).toBe(true);
    expect(after.items.reduce((sum, e) => sum + e.amount, 0)).toBe(await balance(user));
    expect(Date.parse(after.items[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(after.items[2]!.createdAt));
  });

  it('names the run an agent run’s model turn was charged for', async () => {
    const { http, model } = world;
    const user = await registerUser(http);
    const agent = await http.post(
      '/api/agents',
      { name: 'Ledger', systemPrompt: 'Answer briefly.', siteIds: [], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    model.script({ text: 'Done.', usage: { input_tokens: 2000, output_tokens: 500 } });
    const started = await http.post(`/api/agents/${agent.body.id}/runs`, { input: 'Go' }, { token: user.token });
    expect(started.status).toBe(201);
    const run = await waitForRun(http, user.token, started.body.id);
    expect(run.status).toBe('completed');
    const newest = (await ledger(user)).items[0];
    expect(newest).toMatchObject({ reason: 'model_turn', amount: -3, balanceAfter: 97, runId: started.body.id });
  });

  it('shows each user only their own entries', async () => {
    const { http, admin } = world;
    const mine = await registerUser(http);
    const theirs = await registerUser(http);
    await http.patch(`/api/admin/users/${mine.id}`, { credits: 777 }, { token: admin.token });
    const own = await ledger(mine);
    expect(own.items[0]).toMatchObject({ reason: 'admin_adjustment', amount: 677, balanceAfter: 777 });
    // Setting the balance it already has moves nothing: the only new entry is the tier's change
    // (amount 0), which an administrator's change of plan records.
    await http.patch(`/api/admin/users/${mine.id}`, { credits: 777, tier: 'pro' }, { token: admin.token });
    const [tierChange, ...rest] = (await ledger(mine)).items;
    expect(tierChange).toMatchObject({
      reason: 'tier_change',
      amount: 0,
      balanceAfter: 777,
      tierChange: { from: 'free', to: 'pro' },
    });
    expect(rest).toEqual(own.items);
    const other = await ledger(theirs);
    expect(other.items.map((e) => e.reason)).toEqual(['signup_grant']);
    expect(other.items.map((e) => e.id)).not.toContain(own.items[0]!.id);
    // The active workspace does not change whose ledger it is: credits belong to the user.
    const asOther = await http.get('/api/billing/ledger', {
      token: theirs.token,
      headers: { 'x-workspace-id': '00000000-0000-4000-8000-000000000000' },
    });
    expectError(asOther, 'WORKSPACE_NOT_FOUND', 404);
  });

  it('pages with limit and cursor, newest first, without gaps or repeats', async () => {
    const { http, admin } = world;
    const user = await registerUser(http);
    for (const credits of [10, 20, 30, 40, 50]) {
      await http.patch(`/api/admin/users/${user.id}`, { credits }, { token: admin.token });
    }
    const seen: Entry[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await ledger(user, `?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen.map((e) => e.balanceAfter)).toEqual([50, 40, 30, 20, 10, 100]);
    expect(new Set(seen.map((e) => e.id)).size).toBe(6);
    const ids = seen.map((e) => BigInt(e.id));
    expect(ids.every((id, i) => i === 0 || id < ids[i - 1]!)).toBe(true);
  });

  it('refuses a bad query with VALIDATION_ERROR', async () => {
    const { http } = world;
    const user = await registerUser(http);
    for (const query of [
      '?limit=0',
      '?limit=201',
      '?limit=abc',
      '?cursor=bm90LWEtY3Vyc29y',
      `?cursor=${Buffer.from('ledger:-1').toString('base64url')}`,
      `?cursor=${Buffer.from('ledger:99999999999999999999').toString('base64url')}`,
    ]) {
      expectError(await http.get(`/api/billing/ledger${query}`, { token: user.token }), 'VALIDATION_ERROR', 400);
    }
    expectError(await http.get('/api/billing/ledger'), 'UNAUTHORIZED', 401);
  });
});
