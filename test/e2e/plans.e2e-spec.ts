import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { ReferenceSite } from '../../examples/site/site.js';
import { CacheInvalidationBus } from '../../src/common/cache/invalidation-bus.js';
import type { CreditsService } from '../../src/credits/credits.service.js';
import { loadSettings } from '../../src/config/settings.js';
import { openDataSource } from '../../src/database/data-source.js';
import { testEnv } from '../setup/shared-runtime.js';
import { creditsOn } from '../utils/credits.js';
import { registerAdmin } from '../utils/admin.js';
import { expectError, Http } from '../utils/http.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser, uniqueEmail } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';

describe('plans: tiers, credits, billing and Team workspaces (e2e)', () => {
  let sites: TestSites;
  let site: ReferenceSite;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;

  beforeAll(async () => {
    sites = await testSites();
    site = await sites.start();
    stack = await Stack.start({ env: siteEnv(sites, [site]) });
    http = new Http(stack.baseUrl);
    admin = await registerAdmin(http, stack);
  });

  afterAll(async () => {
    await stack?.stop();
    await sites?.stopAll();
  });

  async function userOn(tier: string, extra: Record<string, unknown> = {}): Promise<TestUser> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier, ...extra }, { token: admin.token });
    return user;
  }

  async function ledgerRows(userId: string): Promise<number> {
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      return (await db.query('SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1', [userId])).rows[0].n;
    } finally {
      await db.end();
    }
  }

  it('billing: payment method, purchases, subscriptions; NO_PAYMENT_METHOD and PAYMENT_FAILED change nothing', async () => {
    const user = await registerUser(http);
    const start = await http.get('/api/billing', { token: user.token });
    expect(start.body).toMatchObject({
      tier: 'free',
      subscriptionStatus: 'active',
      paymentMethod: null,
      limits: { vaultSites: 3, agents: 3, webhookAgents: false },
    });
    const credits = start.body.credits as number;
    expectError(
      await http.post('/api/billing/credits/purchase', { amount: 100 }, { token: user.token }),
      'NO_PAYMENT_METHOD',
      402,
    );
    expectError(
      await http.post('/api/billing/subscription', { tier: 'pro' }, { token: user.token }),
      'NO_PAYMENT_METHOD',
      402,
    );
    expectError(
      await http.post('/api/billing/payment-method', { paymentMethodToken: 'tok_bogus' }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expectError(
      await http.post('/api/billing/credits/purchase', { amount: 0 }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );

    const declined = await http.post(
      '/api/billing/payment-method',
      { paymentMethodToken: 'tok_chargeDeclined' },
      { token: user.token },
    );
    expect(declined.body.paymentMethod).toEqual({ brand: 'visa', last4: '0002' });
    const rows = await ledgerRows(user.id);
    expectError(
      await http.post('/api/billing/credits/purchase', { amount: 250 }, { token: user.token }),
      'PAYMENT_FAILED',
      402,
    );
    expectError(
      await http.post('/api/billing/subscription', { tier: 'team' }, { token: user.token }),
      'PAYMENT_FAILED',
      402,
    );
    const after = (await http.get('/api/billing', { token: user.token })).body;
    expect(after).toMatchObject({ credits, tier: 'free' });
    expect(await ledgerRows(user.id)).toBe(rows);

    await http.post('/api/billing/payment-method', { paymentMethodToken: 'tok_visa' }, { token: user.token });
    const bought = await http.post('/api/billing/credits/purchase', { amount: 250 }, { token: user.token });
    expect(bought.status).toBe(200);
    expect(bought.body).toEqual({
      credits: credits + 250,
      purchase: {
        id: expect.any(String),
        credits: 250,
        amountCents: 250,
        status: 'succeeded',
        createdAt: expect.any(String),
        settledAt: expect.any(String),
      },
    });
    expect(await ledgerRows(user.id)).toBe(rows + 1);
    // The declined purchase is kept, failed, beside the one that succeeded; newest first.
    const purchases = (await http.get('/api/billing/purchases', { token: user.token })).body;
    expect(purchases.items.map((p: { status: string; credits: number }) => [p.status, p.credits])).toEqual([
      ['succeeded', 250],
      ['failed', 250],
    ]);
    expect(purchases.nextCursor).toBeNull();
    const upgraded = await http.post('/api/billing/subscription', { tier: 'team' }, { token: user.token });
    expect(upgraded.body).toMatchObject({
      tier: 'team',
      subscriptionStatus: 'active',
      paymentMethod: { brand: 'visa', last4: '4242' },
      limits: { workspaces: 5 },
    });
  });

  it('SUBSCRIPTION_PAST_DUE for features above free while overdue; free features keep working; paying restores', async () => {
    const user = await userOn('harness');
    const hook = await http.post(
      '/api/agents',
      { name: 'h', systemPrompt: 'p', siteIds: [], trigger: { type: 'webhook', schema: [] } },
      { token: user.token },
    );
    expect(hook.status).toBe(201);
    await http.patch(`/api/admin/users/${user.id}`, { subscriptionStatus: 'past_due' }, { token: admin.token });
    expectError(
      await http.post(
        '/api/agents',
        { name: 'h2', systemPrompt: 'p', siteIds: [], trigger: { type: 'webhook', schema: [] } },
        { token: user.token },
      ),
      'SUBSCRIPTION_PAST_DUE',
      402,
    );
    expectError(
      await http.post(
        `/api/webhooks/agent/${hook.body.id}`,
        {},
        { headers: { 'x-webhook-secret': hook.body.webhookSecret } },
      ),
      'SUBSCRIPTION_PAST_DUE',
      402,
    );
    expect(
      (
        await http.post(
          '/api/agents',
          { name: 'm', systemPrompt: 'p', siteIds: [], trigger: { type: 'manual' } },
          { token: user.token },
        )
      ).status,
    ).toBe(201);
    expect((await http.get('/api/billing', { token: user.token })).body.limits).toMatchObject({
      webhookAgents: false,
      agents: 3,
    });
    await http.post('/api/billing/payment-method', { paymentMethodToken: 'tok_visa' }, { token: user.token });
    await http.post('/api/billing/subscription', { tier: 'harness' }, { token: user.token });
    expect(
      (
        await http.post(
          `/api/webhooks/agent/${hook.body.id}`,
          {},
          { headers: { 'x-webhook-secret': hook.body.webhookSecret } },
        )
      ).status,
    ).toBe(202);
  });

  /** The credits service on a connection of its own (as another process of the service would have). */
  async function withCredits(work: (credits: CreditsService, dataSource: DataSource) => Promise<void>): Promise<void> {
    const settings = {
      ...loadSettings({ DATA_DIR: stack.dir, JWT_SECRET: 'x'.repeat(40), VAULT_KEY: stack.env.VAULT_KEY! }),
      databaseUrl: testEnv('databaseUrl'),
    };
    const dataSource = await openDataSource(settings);
    try {
      // A bus without caches (never bootstrapped): the users table's trigger tells the API's caches.
      await work(creditsOn(dataSource, new CacheInvalidationBus(settings)), dataSource);
    } finally {
      await dataSource.destroy();
    }
  }

  it('50 concurrent charges against a balance of 10: 10 succeed, the balance ends at 0, never below', async () => {
    const user = await userOn('free', { credits: 10 });
    await withCredits(async (credits, dataSource) => {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) => credits.adjust(user.id, -1, 'model_turn', `race-${user.id}-${i}`)),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(10);
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(refused).toHaveLength(40);
      expect(refused.every((o) => (o.reason as { code?: string }).code === 'NO_CREDITS')).toBe(true);
      expect(await credits.balance(user.id)).toBe(0);
      const ledger = await dataSource.query(
        'SELECT min(balance_after)::int AS low, sum(delta)::int AS spent FROM credit_ledger WHERE user_id = $1 AND reason = $2',
        [user.id, 'model_turn'],
      );
      expect(ledger[0]).toEqual({ low: 0, spent: -10 });
    });
  });

  it('usage charges (CreditsService.charge): concurrent ones take what is left and never more; a repeated reference charges once', async () => {
    const user = await userOn('free', { credits: 10 });
    await withCredits(async (credits, dataSource) => {
      // 8 charges of 3 against 10: usage already happened, so each takes what is left, down to 0.
      const charges = await Promise.all(
        Array.from({ length: 8 }, (_, i) => credits.charge(user.id, 3, 'chat_turn', `usage-${user.id}-${i}`)),
      );
      expect(charges.reduce((sum, c) => sum + c.charged, 0)).toBe(10);
      expect(charges.map((c) => c.charged).sort()).toEqual([0, 0, 0, 0, 1, 3, 3, 3]);
      expect(await credits.balance(user.id)).toBe(0);
      const ledger = await dataSource.query(
        'SELECT min(balance_after)::int AS low, sum(delta)::int AS spent, count(*)::int AS n FROM credit_ledger WHERE user_id = $1 AND reason = $2',
        [user.id, 'chat_turn'],
      );
      expect(ledger[0]).toEqual({ low: 0, spent: -10, n: 8 });
      // The same reference again (a retried activity): the first charge's amount, nothing new.
      const rowsBefore = await ledgerRows(user.id);
      const again = await credits.charge(user.id, 3, 'chat_turn', `usage-${user.id}-0`);
      expect(again).toEqual({ charged: charges[0]!.charged, balance: 0 });
      expect(await ledgerRows(user.id)).toBe(rowsBefore);
      await expect(credits.charge('00000000-0000-4000-8000-000000000000', 1, 'chat_turn')).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
    });
  });

  it('workspaces: TIER_REQUIRED below team, FEATURE_LIMIT_REACHED past 5, members, roles, ownership', async () => {
    expectError(
      await http.post('/api/workspaces', { name: 'W' }, { token: (await userOn('harness')).token }),
      'TIER_REQUIRED',
      403,
    );
    const owner = await userOn('team');
    const created = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await http.post('/api/workspaces', { name: `W${i}` }, { token: owner.token });
      expect(res.status).toBe(201);
      created.push(res.body);
    }
    expect(created[0]).toMatchObject({ name: 'W0', ownerId: owner.id, role: 'owner' });
    expectError(
      await http.post('/api/workspaces', { name: 'W5' }, { token: owner.token }),
      'FEATURE_LIMIT_REACHED',
      403,
    );
    const ws = created[0].id as string;
    const [adminUser, member, viewer, outsider] = [
      await registerUser(http),
      await registerUser(http),
      await registerUser(http),
      await userOn('team'),
    ];
    await joinWorkspace(http, ws, owner.token, adminUser, 'admin');
    await joinWorkspace(http, ws, adminUser.token, member, 'member');
    expectError(
      await http.post(
        `/api/workspaces/${ws}/members`,
        { email: viewer.email, role: 'viewer' },
        { token: member.token },
      ),
      'PERMISSION_DENIED',
      403,
    );
    await joinWorkspace(http, ws, owner.token, viewer, 'viewer');
    expectError(
      await http.post(`/api/workspaces/${ws}/members`, { email: viewer.email, role: 'viewer' }, { token: owner.token }),
      'VALIDATION_ERROR',
      400,
    );
    expectError(
      await http.post(`/api/workspaces/${ws}/members`, { email: viewer.email, role: 'owner' }, { token: owner.token }),
      'VALIDATION_ERROR',
      400,
    );

    expectError(await http.get(`/api/workspaces/${ws}`, { token: outsider.token }), 'WORKSPACE_NOT_FOUND', 404);
    expectError(
      await http.get('/api/workspaces/00000000-0000-4000-8000-000000000000', { token: owner.token }),
      'WORKSPACE_NOT_FOUND',
      404,
    );
    expect((await http.get(`/api/workspaces/${ws}`, { token: viewer.token })).body.role).toBe('viewer');
    expect(
      (await http.get('/api/workspaces', { token: member.token })).body.items.map((w: { id: string }) => w.id),
    ).toEqual([ws]);
    const roster = (await http.get(`/api/workspaces/${ws}/members`, { token: viewer.token })).body.items;
    expect(Object.fromEntries(roster.map((m: { email: string; role: string }) => [m.email, m.role]))).toEqual({
      [owner.email]: 'owner',
      [adminUser.email]: 'admin',
      [member.email]: 'member',
      [viewer.email]: 'viewer',
    });

    expectError(
      await http.patch(`/api/workspaces/${ws}/members/${owner.id}`, { role: 'member' }, { token: adminUser.token }),
      'ROLE_CHANGE_FORBIDDEN',
      403,
    );
    expectError(
      await http.delete(`/api/workspaces/${ws}/members/${owner.id}`, { token: adminUser.token }),
      'ROLE_CHANGE_FORBIDDEN',
      403,
    );
    expectError(
      await http.patch(`/api/workspaces/${ws}/members/${outsider.id}`, { role: 'member' }, { token: owner.token }),
      'MEMBER_NOT_FOUND',
      404,
    );
    expectError(
      await http.delete(`/api/workspaces/${ws}/members/${outsider.id}`, { token: owner.token }),
      'MEMBER_NOT_FOUND',
      404,
    );
    expectError(
      await http.patch(`/api/workspaces/${ws}/members/${viewer.id}`, { role: 'admin' }, { token: member.token }),
      'PERMISSION_DENIED',
      403,
    );
    expect(
      (await http.patch(`/api/workspaces/${ws}/members/${viewer.id}`, { role: 'member' }, { token: adminUser.token }))
        .body.role,
    ).toBe('member');

    expectError(
      await http.post(`/api/workspaces/${ws}/transfer-ownership`, { userId: adminUser.id }, { token: adminUser.token }),
      'PERMISSION_DENIED',
      403,
    );
    expectError(
      await http.post(`/api/workspaces/${ws}/transfer-ownership`, { userId: outsider.id }, { token: owner.token }),
      'MEMBER_NOT_FOUND',
      404,
    );
    expectError(
      await http.post(`/api/workspaces/${ws}/transfer-ownership`, { userId: adminUser.id }, { token: owner.token }),
      'WORKSPACE_REQUIRED',
      403,
    );
    await http.patch(`/api/admin/users/${adminUser.id}`, { tier: 'team' }, { token: admin.token });
    const transferred = await http.post(
      `/api/workspaces/${ws}/transfer-ownership`,
      { userId: adminUser.id },
      { token: owner.token },
    );
    expect(transferred.body).toMatchObject({ ownerId: adminUser.id, role: 'admin' });
    expect((await http.delete(`/api/workspaces/${ws}/members/${owner.id}`, { token: adminUser.token })).status).toBe(
      204,
    );
    expectError(await http.get(`/api/workspaces/${ws}`, { token: owner.token }), 'WORKSPACE_NOT_FOUND', 404);
  });

  it('invitations: the same answer for a registered and an unknown email; no membership until the invited user accepts', async () => {
    const owner = await userOn('team');
    const ws = (await http.post('/api/workspaces', { name: 'Invites' }, { token: owner.token })).body.id as string;
    const invitee = await registerUser(http);
    const unknownEmail = uniqueEmail('nobody');
    const invite = (email: string, role = 'member') =>
      http.post(`/api/workspaces/${ws}/members`, { email, role }, { token: owner.token });

    // The same status and the same fields, of the same types, whether or not an account has the address.
    const known = await invite(invitee.email.toUpperCase());
    const unknown = await invite(unknownEmail);
    expect([known.status, unknown.status]).toEqual([201, 201]);
    const shape = (body: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(body).map(([k, v]) => [k, v === null ? 'null' : typeof v]));
    expect(shape(known.body)).toEqual(shape(unknown.body));
    expect(known.body).toMatchObject({ workspaceId: ws, email: invitee.email, role: 'member', invitedBy: owner.id });
    expect(unknown.body).toMatchObject({ workspaceId: ws, email: unknownEmail, role: 'member', invitedBy: owner.id });
    const days = (Date.parse(known.body.expiresAt) - Date.parse(known.body.createdAt)) / 86_400_000;
    expect(Math.round(days)).toBe(7);

    // Nobody is a member yet: the roster, the invitee's view and their workspace list say so.
    const roster = async () =>
      (await http.get(`/api/workspaces/${ws}/members`, { token: owner.token })).body.items.map(
        (m: { email: string }) => m.email,
      );
    expect(await roster()).toEqual([owner.email]);
    expectError(await http.get(`/api/workspaces/${ws}`, { token: invitee.token }), 'WORKSPACE_NOT_FOUND', 404);
    expect((await http.get('/api/workspaces', { token: invitee.token })).body.items).toEqual([]);
    const pending = await http.get(`/api/workspaces/${ws}/invitations`, { token: owner.token });
    expect(pending.body.items.map((i: { email: string }) => i.email)).toEqual([invitee.email, unknownEmail]);
    // The invited user sees their invitation; the registered address does not see the others'.
    expect((await http.get('/api/invitations', { token: invitee.token })).body.items).toEqual([known.body]);
  });

  it('invitations: accept, decline, revoke; nobody but the invited user can accept, and the member limit applies on accepting', async () => {
    const owner = await userOn('team');
    const ws = (await http.post('/api/workspaces', { name: 'Joins' }, { token: owner.token })).body.id as string;
    const [invitee, other, stranger, late] = [
      await registerUser(http),
      await registerUser(http),
      await registerUser(http),
      await registerUser(http),
    ];
    const invite = async (email: string, role: string, workspaceId = ws) => {
      const res = await http.post(`/api/workspaces/${workspaceId}/members`, { email, role }, { token: owner.token });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const roster = async () =>
      (await http.get(`/api/workspaces/${ws}/members`, { token: owner.token })).body.items.map(
        (m: { email: string; role: string }) => `${m.email}:${m.role}`,
      );
    const accept = (id: string, token: string) => http.post(`/api/invitations/${id}/accept`, undefined, { token });
    const decline = (id: string, token: string) => http.post(`/api/invitations/${id}/decline`, undefined, { token });

    // Someone else's invitation, an unknown one and a malformed id: NOT_FOUND, and nothing changes.
    const forInvitee = await invite(invitee.email, 'admin');
    for (const who of [other, owner]) {
      expectError(await accept(forInvitee, who.token), 'NOT_FOUND', 404);
      expectError(await decline(forInvitee, who.token), 'NOT_FOUND', 404);
    }
    expectError(await accept('00000000-0000-4000-8000-000000000000', invitee.token), 'NOT_FOUND', 404);
    expectError(await accept('not-an-id', invitee.token), 'NOT_FOUND', 404);
    expect(await roster()).toEqual([`${owner.email}:owner`]);

    // Accepting makes the invited user a member with the invited role, once.
    const accepted = await accept(forInvitee, invitee.token);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id: ws, name: 'Joins', role: 'admin' });
    expect(await roster()).toEqual([`${owner.email}:owner`, `${invitee.email}:admin`]);
    expectError(await accept(forInvitee, invitee.token), 'NOT_FOUND', 404);
    expect((await http.get('/api/invitations', { token: invitee.token })).body.items).toEqual([]);

    // Declining deletes the invitation: no membership, and it can no longer be accepted.
    const forOther = await invite(other.email, 'viewer');
    expect((await decline(forOther, other.token)).status).toBe(204);
    expectError(await accept(forOther, other.token), 'NOT_FOUND', 404);
    expectError(await http.get(`/api/workspaces/${ws}`, { token: other.token }), 'WORKSPACE_NOT_FOUND', 404);

    // Revoking (admins and the owner): the invited user can no longer accept it.
    const forStranger = await invite(stranger.email, 'member');
    const revokePath = `/api/workspaces/${ws}/invitations/${forStranger}`;
    expectError(await http.delete(revokePath, { token: other.token }), 'WORKSPACE_NOT_FOUND', 404);
    expectError(await http.delete(revokePath, { token: stranger.token }), 'WORKSPACE_NOT_FOUND', 404);
    expectError(
      await http.get(`/api/workspaces/${ws}/invitations`, { token: stranger.token }),
      'WORKSPACE_NOT_FOUND',
      404,
    );
    // Another workspace's invitation is not revoked through this one.
    const ws2 = (await http.post('/api/workspaces', { name: 'Other' }, { token: owner.token })).body.id as string;
    const elsewhere = await invite(stranger.email, 'viewer', ws2);
    expectError(
      await http.delete(`/api/workspaces/${ws}/invitations/${elsewhere}`, { token: owner.token }),
      'NOT_FOUND',
      404,
    );
    expect((await http.delete(revokePath, { token: invitee.token })).status).toBe(204);
    expectError(await http.delete(revokePath, { token: owner.token }), 'NOT_FOUND', 404);
    expectError(await accept(forStranger, stranger.token), 'NOT_FOUND', 404);
    expect(
      (await http.get('/api/invitations', { token: stranger.token })).body.items.map((i: { id: string }) => i.id),
    ).toEqual([elsewhere]);

    // A member below admin can neither list nor revoke invitations.
    const forLate = await invite(late.email, 'viewer');
    expect((await accept(forLate, late.token)).status).toBe(200);
    expectError(await http.get(`/api/workspaces/${ws}/invitations`, { token: late.token }), 'PERMISSION_DENIED', 403);
    const forOtherAgain = await invite(other.email, 'member');
    expectError(
      await http.delete(`/api/workspaces/${ws}/invitations/${forOtherAgain}`, { token: late.token }),
      'PERMISSION_DENIED',
      403,
    );

    // The member limit of the owner's plan is checked when the invitation is accepted: it stays pending.
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'free' }, { token: admin.token });
    expectError(await accept(forOtherAgain, other.token), 'FEATURE_LIMIT_REACHED', 403);
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team' }, { token: admin.token });
    expect((await accept(forOtherAgain, other.token)).status).toBe(200);
    expect(await roster()).toEqual([
      `${owner.email}:owner`,
      `${invitee.email}:admin`,
      `${late.email}:viewer`,
      `${other.email}:member`,
    ]);
  });

  it('role matrix over the workspace vault, agents and runs; sharing needs X-Workspace-Id', async () => {
    const owner = await userOn('team');
    const ws = (await http.post('/api/workspaces', { name: 'Matrix' }, { token: owner.token })).body.id as string;
    const people: Record<string, TestUser> = { owner };
    for (const role of ['admin', 'member', 'viewer']) {
      people[role] = await registerUser(http);
      await joinWorkspace(http, ws, owner.token, people[role]!, role);
    }
    const inWs = (token: string) => ({ token, headers: { 'x-workspace-id': ws } });
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, inWs(owner.token))).body.id as string;
    const agentId = (
      await http.post(
        '/api/agents',
        { name: 'shared', systemPrompt: 'p', siteIds: [siteId], trigger: { type: 'manual' } },
        inWs(owner.token),
      )
    ).body.id as string;
    const allowed: Record<string, string[]> = {
      owner: ['readSites', 'addSite', 'readAgents', 'createAgent', 'deleteAgent', 'readRuns'],
      admin: ['readSites', 'addSite', 'readAgents', 'createAgent', 'deleteAgent', 'readRuns'],
      member: ['readSites', 'readAgents', 'createAgent', 'readRuns'],
      viewer: ['readSites', 'readAgents', 'readRuns'],
    };
    for (const [role, user] of Object.entries(people)) {
      const auth = inWs(user.token);
      const scratch = (
        await http.post(
          '/api/agents',
          { name: `tmp-${role}`, systemPrompt: 'p', siteIds: [], trigger: { type: 'manual' } },
          inWs(owner.token),
        )
      ).body.id;
      const actions: Record<string, () => Promise<{ status: number; body: any; text: string; headers: Headers }>> = {
        readSites: () => http.get(`/api/vault/sites/${siteId}`, auth),
        addSite: () => http.post('/api/vault/sites', { url: `${site.url}/${role}` }, auth),
        readAgents: () => http.get(`/api/agents/${agentId}`, auth),
        createAgent: () =>
          http.post(
            '/api/agents',
            { name: `by-${role}`, systemPrompt: 'p', siteIds: [siteId], trigger: { type: 'manual' } },
            auth,
          ),
        deleteAgent: () => http.delete(`/api/agents/${scratch}`, auth),
        readRuns: () => http.get(`/api/agents/${agentId}/runs`, auth),
      };
      for (const [action, call] of Object.entries(actions)) {
        const res = await call();
        if (allowed[role]!.includes(action)) {
          expect([role, action, res.status < 300]).toEqual([role, action, true]);
        } else {
          expect([role, action, res.status, res.body.code]).toEqual([role, action, 403, 'PERMISSION_DENIED']);
        }
      }
    }
    // Sharing a personal site into the workspace needs the header naming a Team workspace.
    const personal = (await http.post('/api/vault/sites', { url: `${site.url}/mine` }, { token: owner.token })).body.id;
    expectError(
      await http.post(`/api/vault/sites/${personal}/share`, undefined, { token: owner.token }),
      'WORKSPACE_REQUIRED',
      403,
    );
    expect((await http.post(`/api/vault/sites/${personal}/share`, undefined, inWs(owner.token))).status).toBe(200);
    expect((await http.get(`/api/vault/sites/${personal}`, inWs(people.viewer!.token))).status).toBe(200);
  });

  it('sharing a site into a workspace counts against the workspace’s vault limit, as adding one there does', async () => {
    const owner = await userOn('team');
    const workspaceId = (await http.post('/api/workspaces', { name: 'Full' }, { token: owner.token })).body
      .id as string;
    const inWs = { token: owner.token, headers: { 'x-workspace-id': workspaceId } };
    // The workspace one site short of the team tier's limit (rows written directly: a hundred manifest
    // fetches would only slow the test).
    const limit = (await http.get('/api/billing', { token: owner.token })).body.limits.vaultSites as number;
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO sites (user_id, workspace_id, url, manifest, manifest_fetched_at)
         SELECT $1, $2, 'https://filler-' || n || '.example.test', '{}', now() FROM generate_series(1, $3::int) AS n`,
        [owner.id, workspaceId, limit - 1],
      );
    } finally {
      await db.end();
    }
    const first = (await http.post('/api/vault/sites', { url: `${site.url}/first` }, { token: owner.token })).body.id;
    const second = (await http.post('/api/vault/sites', { url: `${site.url}/second` }, { token: owner.token })).body.id;

    expect((await http.post(`/api/vault/sites/${first}/share`, undefined, inWs)).status).toBe(200);
    expectError(await http.post(`/api/vault/sites/${second}/share`, undefined, inWs), 'VAULT_LIMIT_REACHED', 403);
    // Refused: still the owner's own, not the workspace's.
    expect((await http.get(`/api/vault/sites/${second}`, { token: owner.token })).status).toBe(200);
    expectError(await http.get(`/api/vault/sites/${second}`, inWs), 'NOT_FOUND', 404);
    // And adding one there directly is refused the same way.
    expectError(await http.post('/api/vault/sites', { url: `${site.url}/third` }, inWs), 'VAULT_LIMIT_REACHED', 403);
  });

  it('isolation: users and workspaces never see each other’s sites, agents or runs', async () => {
    const a = await userOn('team');
    const b = await userOn('team');
    const w1 = (await http.post('/api/workspaces', { name: 'A' }, { token: a.token })).body.id as string;
    const w2 = (await http.post('/api/workspaces', { name: 'B' }, { token: b.token })).body.id as string;
    await joinWorkspace(http, w2, b.token, a, 'admin');
    const personalSite = (await http.post('/api/vault/sites', { url: site.url }, { token: a.token })).body.id as string;
    const w1Site = (
      await http.post('/api/vault/sites', { url: site.url }, { token: a.token, headers: { 'x-workspace-id': w1 } })
    ).body.id as string;
    const w1Agent = (
      await http.post(
        '/api/agents',
        { name: 'w1', systemPrompt: 'p', siteIds: [w1Site], trigger: { type: 'manual' } },
        { token: a.token, headers: { 'x-workspace-id': w1 } },
      )
    ).body.id as string;
    const run = (
      await http.post(`/api/agents/${w1Agent}/runs`, {}, { token: a.token, headers: { 'x-workspace-id': w1 } })
    ).body.id as string;

    // Another user: nothing of A's, personal or W1's.
    expectError(await http.get(`/api/vault/sites/${personalSite}`, { token: b.token }), 'NOT_FOUND', 404);
    expectError(await http.get(`/api/vault/sites/${w1Site}`, { token: b.token }), 'NOT_FOUND', 404);
    expectError(await http.get(`/api/agents/${w1Agent}`, { token: b.token }), 'AGENT_NOT_FOUND', 404);
    expectError(await http.get(`/api/runs/${run}`, { token: b.token }), 'RUN_NOT_FOUND', 404);
    expectError(
      await http.get(`/api/agents/${w1Agent}`, { token: b.token, headers: { 'x-workspace-id': w1 } }),
      'WORKSPACE_NOT_FOUND',
      404,
    );
    // Another workspace (W2, where A is admin) does not show W1's resources, nor A's personal ones.
    const inW2 = { token: a.token, headers: { 'x-workspace-id': w2 } };
    expectError(await http.get(`/api/vault/sites/${w1Site}`, inW2), 'NOT_FOUND', 404);
    expectError(await http.get(`/api/vault/sites/${personalSite}`, inW2), 'NOT_FOUND', 404);
    expectError(await http.get(`/api/agents/${w1Agent}`, inW2), 'AGENT_NOT_FOUND', 404);
    expectError(await http.get(`/api/runs/${run}`, inW2), 'RUN_NOT_FOUND', 404);
    expect((await http.get('/api/vault/sites', inW2)).body.items).toEqual([]);
    // A's personal scope does not show W1's resources either; W1's scope shows them.
    expectError(await http.get(`/api/agents/${w1Agent}`, { token: a.token }), 'AGENT_NOT_FOUND', 404);
    expect(
      (await http.get('/api/vault/sites', { token: a.token })).body.items.map((s: { id: string }) => s.id),
    ).toEqual([personalSite]);
    expect((await http.get(`/api/runs/${run}`, { token: a.token, headers: { 'x-workspace-id': w1 } })).status).toBe(
      200,
    );
    // Chat sessions: a W1 session may use W1's sites; a personal one may not.
    const inW1 = { token: a.token, headers: { 'x-workspace-id': w1 } };
    expect((await http.post('/api/sessions', { sites: [{ siteId: w1Site }] }, inW1)).status).toBe(201);
    expectError(
      await http.post('/api/sessions', { sites: [{ siteId: w1Site }] }, { token: a.token }),
      'VALIDATION_ERROR',
      400,
    );
    expectError(await http.post('/api/sessions', { sites: [{ siteId: personalSite }] }, inW1), 'VALIDATION_ERROR', 400);
    // An agent of W1 cannot use a site from elsewhere.
    expectError(
      await http.post(
        '/api/agents',
        { name: 'x', systemPrompt: 'p', siteIds: [personalSite], trigger: { type: 'manual' } },
        { token: a.token, headers: { 'x-workspace-id': w1 } },
      ),
      'VALIDATION_ERROR',
      400,
    );
  });
});
