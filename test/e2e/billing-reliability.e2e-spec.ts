import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client, Connection } from '@temporalio/client';
import { registerAdmin } from '../utils/admin.js';
import { sql } from '../utils/db.js';
import { expectError, Http, type HttpAnswer } from '../utils/http.js';
import { Stack } from '../utils/stack.js';
import {
  signStripeEvent,
  stripeEnv,
  stripeEvent,
  stripeMockApiBase,
  StripeProxy,
  TEST_STRIPE_PRICES,
} from '../utils/stripe.js';
import { temporalClient } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';

const METRICS_TOKEN = 'billing-reliability-metrics-token-0123456789';

const ledgerRows = async (userId: string): Promise<number> =>
  (await sql<{ n: number }>('SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1', [userId]))[0]!.n;

/** The balance straight from the database: reading GET /api/billing would itself reconcile. */
const balance = async (userId: string): Promise<number> =>
  Number((await sql<{ credits: string }>('SELECT credits FROM users WHERE id = $1', [userId]))[0]!.credits);

const purchaseRow = async (id: string) =>
  (
    await sql<{ status: string; provider_ref: string | null }>(
      'SELECT status, provider_ref FROM credit_purchases WHERE id = $1',
      [id],
    )
  )[0]!;

/** Seconds since the epoch, `offset` from now: Stripe's `created`. */
const at = (offset: number): number => Math.floor(Date.now() / 1000) + offset;

/** A value of the Prometheus exposition (0 when the series is absent). */
const value = (text: string, series: string): number =>
  Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`${series} `))
      ?.split(' ')[1] ?? 0,
  );

describe('billing reliability with Stripe: the purchase reconciler, and admin tier overrides (e2e)', () => {
  let stack: Stack;
  let http: Http;
  let proxy: StripeProxy;
  let webhookSecret: string;
  let temporal: Client;
  let connection: Connection;
  let admin: TestUser;

  beforeAll(async () => {
    proxy = await StripeProxy.start(stripeMockApiBase());
    const stripe = stripeEnv({ apiBase: proxy.url, env: { METRICS_TOKEN } });
    webhookSecret = stripe.webhookSecret;
    stack = await Stack.start({ env: stripe.env, workerHttp: true });
    http = new Http(stack.baseUrl);
    ({ client: temporal, connection } = await temporalClient());
    admin = await registerAdmin(http, stack);
  });

  afterEach(() => {
    proxy.clear();
  });

  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await proxy?.close();
  });

  const deliver = (event: object): Promise<HttpAnswer> => {
    const signed = signStripeEvent(event, webhookSecret);
    return http.request('POST', '/api/webhooks/stripe', {
      rawBody: signed.payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': signed.signature },
    });
  };

  const withCard = async (): Promise<TestUser> => {
    const user = await registerUser(http);
    const stored = await http.post(
      '/api/billing/payment-method',
      { paymentMethodToken: 'pm_card_visa' },
      { token: user.token },
    );
    expect(stored.status).toBe(200);
    return user;
  };

  const apiMetrics = async (): Promise<string> =>
    (await http.get('/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
  const workerMetrics = async (): Promise<string> =>
    (await new Http(stack.workerHttpUrl).get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))
      .text;

  describe('the purchase reconciler', () => {
    it('settles a purchase whose webhook never came, without the user reading billing, once even when the webhook comes after; the gauge shows it stuck', async () => {
      // The worker scheduled the reconciler (Stripe is configured); paused here, so only this test's run acts.
      const schedule = temporal.schedule.getHandle(`purchase-reconcile-${stack.env.TEMPORAL_TASK_QUEUE!}`);
      const described = await schedule.describe();
      expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'purchaseReconcileWorkflow' });
      expect(described.spec.intervals?.[0]?.every).toBe(5 * 60_000);
      await schedule.pause('the test runs the reconciler itself');

      const user = await withCard();
      const before = await balance(user.id);
      proxy.rewrite({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, (intent) => ({
        ...intent,
        status: 'processing',
      }));
      const bought = await http.post('/api/billing/credits/purchase', { amount: 300 }, { token: user.token });
      expect(bought.body).toMatchObject({ credits: before, purchase: { status: 'pending', credits: 300 } });
      const purchase = bought.body.purchase as { id: string; amountCents: number };
      const ref = (await purchaseRow(purchase.id)).provider_ref!;
      expect(ref).toMatch(/^pi_/);
      const rows = await ledgerRows(user.id);

      // Its event never comes; twenty minutes later it is stuck.
      await sql("UPDATE credit_purchases SET created_at = now() - interval '20 minutes' WHERE id = $1", [purchase.id]);
      const stuck = await apiMetrics();
      expect(value(stuck, 'agentsite_card_purchases_pending{age="stuck"}')).toBeGreaterThanOrEqual(1);
      expect(value(stuck, 'agentsite_card_purchases_oldest_pending_seconds')).toBeGreaterThanOrEqual(20 * 60);
      const settledBefore = value(
        await workerMetrics(),
        'agentsite_card_purchases_reconciled_total{outcome="succeeded",via="schedule"}',
      );

      // Stripe charged it after all: the reconciler's batch finds it and grants the credits.
      proxy.rewrite({ method: 'GET', path: new RegExp(`^/v1/payment_intents/${ref}$`) }, (intent) => ({
        ...intent,
        id: ref,
        status: 'succeeded',
      }));
      const result = await temporal.workflow.execute('purchaseReconcileWorkflow', {
        taskQueue: stack.env.TEMPORAL_TASK_QUEUE!,
        workflowId: `test-purchase-reconcile-${purchase.id}`,
        args: [],
      });
      expect((result as { settled: number }).settled).toBeGreaterThanOrEqual(1);
      expect(proxy.requests({ path: new RegExp(`^/v1/payment_intents/${ref}$`) }).length).toBeGreaterThanOrEqual(1);
      expect(await purchaseRow(purchase.id)).toMatchObject({ status: 'succeeded' });
      expect(await balance(user.id)).toBe(before + 300);
      expect(await ledgerRows(user.id)).toBe(rows + 1);
      expect(
        value(await workerMetrics(), 'agentsite_card_purchases_reconciled_total{outcome="succeeded",via="schedule"}') -
          settledBefore,
      ).toBeGreaterThanOrEqual(1);

      // The webhook arrives late, and the reconciler runs again: nothing more is granted.
      const late = stripeEvent('payment_intent.succeeded', {
        id: ref,
        object: 'payment_intent',
        amount: purchase.amountCents,
        amount_received: purchase.amountCents,
        status: 'succeeded',
        metadata: { agentsite_purchase_id: purchase.id, agentsite_user_id: user.id },
      });
      expect((await deliver(late)).body).toEqual({ received: true, duplicate: false });
      await temporal.workflow.execute('purchaseReconcileWorkflow', {
        taskQueue: stack.env.TEMPORAL_TASK_QUEUE!,
        workflowId: `test-purchase-reconcile-again-${purchase.id}`,
        args: [],
      });
      expect((await http.get('/api/billing', { token: user.token })).body.credits).toBe(before + 300);
      expect(await ledgerRows(user.id)).toBe(rows + 1);
      const purchases = (await http.get('/api/billing/purchases', { token: user.token })).body.items;
      expect(purchases).toEqual([expect.objectContaining({ id: purchase.id, status: 'succeeded' })]);
    });
  });

  describe("an admin's tier change against the subscription's events", () => {
    const subscribed = async (tier: 'pro' | 'harness') => {
      const user = await withCard();
      const answer = await http.post('/api/billing/subscription', { tier }, { token: user.token });
      expect(answer.body).toMatchObject({ tier, subscriptionStatus: 'active' });
      const row = (
        await sql<{ customer_id: string; subscription_id: string }>(
          'SELECT customer_id, subscription_id FROM billing_customers WHERE user_id = $1',
          [user.id],
        )
      )[0]!;
      return { user, customer: row.customer_id, subscription: row.subscription_id };
    };
    const updated = (customer: string, subscription: string, tier: 'pro' | 'harness' | 'team', created: number) =>
      stripeEvent(
        'customer.subscription.updated',
        {
          id: subscription,
          customer,
          status: 'active',
          items: { data: [{ price: { id: TEST_STRIPE_PRICES[tier] } }] },
        },
        { created },
      );
    const adminView = async (userId: string) => {
      const page = (await http.get('/api/admin/users?limit=100', { token: admin.token })).body.items as Array<{
        id: string;
      }>;
      return page.find((u) => u.id === userId);
    };

    it('holds against a later subscription event (recorded, shown to the admin), is in the ledger, and clearing it returns to the subscription', async () => {
      const { user, customer, subscription } = await subscribed('harness');
      const set = await http.patch(`/api/admin/users/${user.id}`, { tier: 'team' }, { token: admin.token });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({
        tier: 'team',
        plan: {
          subscriptionTier: 'harness',
          providerStatus: 'active',
          override: { tier: 'team', setBy: admin.id, overridden: null },
        },
      });

      // A renewal of the same plan, then a failed invoice: recorded, not applied.
      expect((await deliver(updated(customer, subscription, 'harness', at(10)))).status).toBe(200);
      await deliver(
        stripeEvent(
          'invoice.payment_failed',
          { id: 'in_1', object: 'invoice', customer, parent: { subscription_details: { subscription } } },
          { created: at(20) },
        ),
      );
      expect((await http.get('/api/billing', { token: user.token })).body).toMatchObject({
        tier: 'team',
        subscriptionStatus: 'active',
        limits: { workspaces: 5 },
      });
      expect(await adminView(user.id)).toMatchObject({
        tier: 'team',
        subscriptionStatus: 'active',
        plan: {
          subscriptionTier: 'harness',
          providerStatus: 'past_due',
          override: { tier: 'team', overridden: { tier: 'harness', status: 'past_due' } },
        },
      });

      // The ledger: the admin's change, with no amount; the admin's id kept in the row.
      const ledger = (await http.get('/api/billing/ledger', { token: user.token })).body.items;
      expect(ledger[0]).toMatchObject({
        reason: 'tier_change',
        amount: 0,
        tierChange: { from: 'harness', to: 'team' },
      });
      const kept = await sql<{ reference: string }>(
        "SELECT reference FROM credit_ledger WHERE user_id = $1 AND reason = 'tier_change'",
        [user.id],
      );
      expect(kept.map((r) => r.reference)).toEqual([expect.stringContaining(`:by:${admin.id}:`)]);

      // Cleared: the subscription's tier and status are in force again, and that is in the ledger too.
      const cleared = await http.delete(`/api/admin/users/${user.id}/tier-override`, { token: admin.token });
      expect(cleared.body).toMatchObject({
        tier: 'harness',
        subscriptionStatus: 'past_due',
        plan: { subscriptionTier: 'harness', override: null },
      });
      expect((await http.get('/api/billing/ledger', { token: user.token })).body.items[0]).toMatchObject({
        reason: 'tier_change',
        tierChange: { from: 'team', to: 'harness' },
      });
      // Without the override the events apply again.
      await deliver(
        stripeEvent(
          'invoice.paid',
          { id: 'in_1', object: 'invoice', customer, parent: { subscription_details: { subscription } } },
          { created: at(30) },
        ),
      );
      expect((await http.get('/api/billing', { token: user.token })).body).toMatchObject({
        tier: 'harness',
        subscriptionStatus: 'active',
      });
    });

    it('ends when the plan changes deliberately: a new price at Stripe, or the user changing it; admins only, known users only', async () => {
      const { user, customer, subscription } = await subscribed('pro');
      await http.patch(`/api/admin/users/${user.id}`, { tier: 'team' }, { token: admin.token });
      expect((await deliver(updated(customer, subscription, 'harness', at(10)))).status).toBe(200);
      expect(await adminView(user.id)).toMatchObject({
        tier: 'harness',
        plan: { subscriptionTier: 'harness', providerStatus: 'active', override: null },
      });

      await http.patch(`/api/admin/users/${user.id}`, { tier: 'team' }, { token: admin.token });
      const own = await http.post('/api/billing/subscription', { tier: 'pro' }, { token: user.token });
      expect(own.body).toMatchObject({ tier: 'pro' });
      expect(await adminView(user.id)).toMatchObject({
        tier: 'pro',
        plan: { subscriptionTier: 'pro', override: null },
      });

      // A user without a subscription: the override holds nothing back, and clearing it is the free tier.
      const plain = await registerUser(http);
      expect(
        (await http.patch(`/api/admin/users/${plain.id}`, { tier: 'pro' }, { token: admin.token })).body,
      ).toMatchObject({
        tier: 'pro',
        plan: { subscriptionTier: null, providerStatus: null, override: { tier: 'pro' } },
      });
      expect(
        (await http.delete(`/api/admin/users/${plain.id}/tier-override`, { token: admin.token })).body,
      ).toMatchObject({
        tier: 'free',
        plan: { override: null },
      });

      expectError(
        await http.delete(`/api/admin/users/${user.id}/tier-override`, { token: user.token }),
        'ADMIN_REQUIRED',
        403,
      );
      expectError(
        await http.delete('/api/admin/users/00000000-0000-4000-8000-000000000000/tier-override', {
          token: admin.token,
        }),
        'NOT_FOUND',
        404,
      );
    });
  });
});
