import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { expectError, Http, type HttpAnswer } from '../utils/http.js';
import { sql } from '../utils/db.js';
import { Stack } from '../utils/stack.js';
import {
  signStripeEvent,
  stripeEnv,
  stripeEvent,
  stripeMockApiBase,
  StripeProxy,
  TEST_STRIPE_PRICES,
} from '../utils/stripe.js';
import { registerUser, type TestUser } from '../utils/users.js';

const ledgerRows = async (userId: string): Promise<number> =>
  (await sql<{ n: number }>('SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1', [userId]))[0]!.n;

const customerRow = async (userId: string) =>
  (
    await sql<{ customer_id: string; subscription_id: string | null }>(
      'SELECT customer_id, subscription_id FROM billing_customers WHERE user_id = $1',
      [userId],
    )
  )[0];

const METRICS_TOKEN = 'stripe-e2e-metrics-token-0123456789abcdef';

/** Seconds since the epoch, `offset` from now: Stripe's `created`. */
const at = (offset: number): number => Math.floor(Date.now() / 1000) + offset;

describe('payments with Stripe, against stripe-mock and signed events (e2e)', () => {
  let stack: Stack;
  let http: Http;
  let proxy: StripeProxy;
  let webhookSecret: string;

  beforeAll(async () => {
    // The API talks to stripe-mock through a proxy that records each request and can hold, alter or
    // fail an answer (stripe-mock is stateless: its PaymentIntents never succeed on their own).
    proxy = await StripeProxy.start(stripeMockApiBase());
    const stripe = stripeEnv({ apiBase: proxy.url, env: { METRICS_TOKEN } });
    webhookSecret = stripe.webhookSecret;
    stack = await Stack.start({ worker: false, env: stripe.env });
    http = new Http(stack.baseUrl);
  });

  afterEach(() => {
    proxy.clear();
  });

  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  /** Delivers an event as Stripe does: the exact bytes, signed with the endpoint's secret. */
  const deliver = (event: object, secret = webhookSecret): Promise<HttpAnswer> => {
    const signed = signStripeEvent(event, secret);
    return http.request('POST', '/api/webhooks/stripe', {
      rawBody: signed.payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': signed.signature },
    });
  };

  const billing = async (user: TestUser) => (await http.get('/api/billing', { token: user.token })).body;

  const withCard = async (token = 'pm_card_visa'): Promise<TestUser> => {
    const user = await registerUser(http);
    const stored = await http.post('/api/billing/payment-method', { paymentMethodToken: token }, { token: user.token });
    expect(stored.status).toBe(200);
    return user;
  };

  const succeeded = (purchase: { id: string; amountCents: number }, user: TestUser, paymentId: string) =>
    stripeEvent('payment_intent.succeeded', {
      id: paymentId,
      object: 'payment_intent',
      amount: purchase.amountCents,
      amount_received: purchase.amountCents,
      status: 'succeeded',
      metadata: { agentsite_purchase_id: purchase.id, agentsite_user_id: user.id },
    });

  it('stores a card on a customer made once, with idempotency keys; names the provider; refuses bad tokens', async () => {
    const user = await registerUser(http);
    const stored = await http.post(
      '/api/billing/payment-method',
      { paymentMethodToken: 'pm_card_visa' },
      { token: user.token },
    );
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      provider: 'stripe',
      publishableKey: null,
      paymentMethod: { brand: 'visa', last4: '4242' },
    });
    const customerId = (await customerRow(user.id))!.customer_id;
    expect(customerId).toMatch(/^cus_/);
    const sent = proxy.requests();
    const customers = sent.filter((r) => r.method === 'POST' && r.path === '/v1/customers');
    expect(customers).toHaveLength(1);
    expect(customers[0]).toMatchObject({
      idempotencyKey: `agentsite-customer-${user.id}`,
      form: { email: user.email, 'metadata[agentsite_user_id]': user.id },
    });
    expect(sent.find((r) => r.path === '/v1/payment_methods/pm_card_visa/attach')).toMatchObject({
      idempotencyKey: `agentsite-attach-${customerId}-pm_card_visa`,
      form: { customer: customerId },
    });
    expect(sent.find((r) => r.path === `/v1/customers/${customerId}`)).toMatchObject({
      form: { 'invoice_settings[default_payment_method]': 'pm_card_visa' },
    });
    for (const write of sent.filter((r) => r.method === 'POST')) {
      expect(write.idempotencyKey).toMatch(/^agentsite-/);
    }

    // A legacy card token becomes a PaymentMethod of the same customer; no second customer.
    proxy.clear();
    const again = await http.post(
      '/api/billing/payment-method',
      { paymentMethodToken: 'tok_visa' },
      { token: user.token },
    );
    expect(again.status).toBe(200);
    expect(proxy.requests().find((r) => r.path === '/v1/payment_methods')).toMatchObject({
      form: { type: 'card', 'card[token]': 'tok_visa' },
    });
    expect(proxy.requests().filter((r) => r.path === '/v1/customers')).toHaveLength(0);
    expect((await customerRow(user.id))!.customer_id).toBe(customerId);

    // Not a Stripe id at all, or one Stripe does not know: VALIDATION_ERROR on the field.
    const bogus = await http.post(
      '/api/billing/payment-method',
      { paymentMethodToken: 'card 4242' },
      { token: user.token },
    );
    expectError(bogus, 'VALIDATION_ERROR', 400);
    expect(bogus.body.details[0].field).toBe('paymentMethodToken');
    proxy.fail({ method: 'POST', path: /^\/v1\/payment_methods\/pm_unknown\/attach$/ }, 400, {
      error: {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: "No such PaymentMethod: 'pm_unknown'",
      },
    });
    expectError(
      await http.post('/api/billing/payment-method', { paymentMethodToken: 'pm_unknown' }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expect((await billing(user)).paymentMethod).toEqual({ brand: 'visa', last4: '4242' });
    // Below Stripe's smallest charge ($0.50).
    expectError(
      await http.post('/api/billing/credits/purchase', { amount: 49 }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
  });

  it('a purchase Stripe is still processing is pending; its payment_intent.succeeded grants the credits once', async () => {
    const user = await withCard();
    const before = (await billing(user)).credits as number;
    const rows = await ledgerRows(user.id);
    proxy.rewrite({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, (intent) => ({
      ...intent,
      status: 'processing',
    }));
    const bought = await http.post('/api/billing/credits/purchase', { amount: 500 }, { token: user.token });
    expect(bought.status).toBe(200);
    expect(bought.body).toMatchObject({
      credits: before,
      purchase: { credits: 500, amountCents: 500, status: 'pending' },
    });
    const purchase = bought.body.purchase;
    const charge = proxy.requests().find((r) => r.path === '/v1/payment_intents')!;
    expect(charge).toMatchObject({
      idempotencyKey: `agentsite-purchase-${purchase.id}`,
      form: {
        amount: '500',
        currency: 'usd',
        confirm: 'true',
        off_session: 'true',
        payment_method: 'pm_card_visa',
        'metadata[agentsite_purchase_id]': purchase.id,
        'metadata[agentsite_user_id]': user.id,
      },
    });
    expect(await ledgerRows(user.id)).toBe(rows);

    const event = succeeded(purchase, user, 'pi_processing_1');
    expect((await deliver(event)).body).toEqual({ received: true, duplicate: false });
    expect((await billing(user)).credits).toBe(before + 500);
    // The same event again (Stripe retries), and another event for the same payment: nothing more.
    expect((await deliver(event)).body).toEqual({ received: true, duplicate: true });
    expect((await deliver(succeeded(purchase, user, 'pi_processing_1'))).body).toEqual({
      received: true,
      duplicate: false,
    });
    expect((await billing(user)).credits).toBe(before + 500);
    expect(await ledgerRows(user.id)).toBe(rows + 1);
    const listed = (await http.get('/api/billing/purchases', { token: user.token })).body.items[0];
    expect(listed).toMatchObject({ id: purchase.id, status: 'succeeded', settledAt: expect.any(String) });
  });

  it("purchases and setup intents are the caller's own: another user sees none of them, no token gets nothing", async () => {
    const alice = await withCard();
    const bob = await withCard('pm_card_mastercard');
    proxy.rewrite({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, (intent) => ({
      ...intent,
      status: 'processing',
    }));
    const bought = await http.post('/api/billing/credits/purchase', { amount: 700 }, { token: alice.token });
    expect(bought.status).toBe(200);
    const alicesPurchase = bought.body.purchase.id as string;
    const listed = async (user: TestUser): Promise<string[]> =>
      ((await http.get('/api/billing/purchases', { token: user.token })).body.items as Array<{ id: string }>).map(
        (p) => p.id,
      );
    expect(await listed(alice)).toEqual([alicesPurchase]);
    expect(await listed(bob)).toEqual([]);

    // Each caller's SetupIntent is made for that caller's own Stripe customer.
    proxy.clear();
    for (const user of [alice, bob]) {
      const intent = await http.post('/api/billing/setup-intent', {}, { token: user.token });
      expect(intent.status).toBe(200);
      expect(intent.body.clientSecret).toEqual(expect.any(String));
    }
    const customers = proxy
      .requests()
      .filter((r) => r.method === 'POST' && r.path === '/v1/setup_intents')
      .map((r) => r.form.customer);
    expect(customers).toEqual([(await customerRow(alice.id))!.customer_id, (await customerRow(bob.id))!.customer_id]);
    expect(customers[0]).not.toBe(customers[1]);

    proxy.clear();
    expectError(await http.get('/api/billing/purchases'), 'UNAUTHORIZED', 401);
    expectError(await http.post('/api/billing/setup-intent', {}), 'UNAUTHORIZED', 401);
    expectError(await http.get('/api/billing/purchases', { token: 'not-a-jwt' }), 'INVALID_TOKEN', 401);
    expectError(await http.post('/api/billing/setup-intent', {}, { token: 'not-a-jwt' }), 'INVALID_TOKEN', 401);
    // Refused before the provider: Stripe was not asked anything.
    expect(proxy.requests()).toEqual([]);
  });

  it('an event that arrives before the API call returns grants the credits once, whichever comes first', async () => {
    const user = await withCard();
    const before = (await billing(user)).credits as number;
    const rows = await ledgerRows(user.id);
    const held = proxy.hold({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, (intent) => ({
      ...intent,
      status: 'succeeded',
    }));
    const answer = http.post('/api/billing/credits/purchase', { amount: 700 }, { token: user.token });
    const request = await held.reached;
    const purchaseId = request.form['metadata[agentsite_purchase_id]']!;
    const delivered = await deliver(succeeded({ id: purchaseId, amountCents: 700 }, user, 'pi_early_1'));
    expect(delivered.body).toEqual({ received: true, duplicate: false });
    expect((await billing(user)).credits).toBe(before + 700);
    held.release();
    const bought = await answer;
    expect(bought.status).toBe(200);
    expect(bought.body).toMatchObject({ credits: before + 700, purchase: { id: purchaseId, status: 'succeeded' } });
    expect(await ledgerRows(user.id)).toBe(rows + 1);
  });

  it('a charge whose answer and event both went missing is settled by asking Stripe when the user reads billing', async () => {
    const user = await withCard();
    const before = (await billing(user)).credits as number;
    // Stripe unreachable for the charge (the SDK's retries included): outcome unknown, purchase pending.
    proxy.fail({ method: 'POST', path: /^\/v1\/payment_intents$/ }, 500, {
      error: { type: 'api_error', message: 'An unknown error occurred' },
    });
    const lost = await http.post('/api/billing/credits/purchase', { amount: 400 }, { token: user.token });
    expectError(lost, 'PAYMENT_FAILED', 402);
    expect(lost.body.error).toContain('the credits are added when Stripe confirms it');
    const never = await http.post('/api/billing/credits/purchase', { amount: 600 }, { token: user.token });
    expectError(never, 'PAYMENT_FAILED', 402);
    proxy.clear();
    const pending = (await http.get('/api/billing/purchases', { token: user.token })).body.items;
    expect(pending.map((p: { status: string; credits: number }) => [p.status, p.credits])).toEqual([
      ['pending', 600],
      ['pending', 400],
    ]);
    const [second, first] = pending as Array<{ id: string }>;
    // Read too soon, nothing is asked; later, the one Stripe charged after all is found by its
    // purchase id and granted; the one Stripe never saw fails once it is an hour old.
    expect((await billing(user)).credits).toBe(before);
    expect(proxy.requests({ path: /^\/v1\/payment_intents\/search$/ })).toHaveLength(0);
    await sql("UPDATE credit_purchases SET created_at = now() - interval '3 minutes' WHERE id = $1", [first!.id]);
    await sql("UPDATE credit_purchases SET created_at = now() - interval '2 hours' WHERE id = $1", [second!.id]);
    proxy.rewrite({ method: 'GET', path: /^\/v1\/payment_intents\/search$/ }, (found, request) => {
      const charged = request.query.query?.includes(first!.id) === true;
      const fixture = (found.data as Array<Record<string, unknown>>)[0]!;
      return {
        ...found,
        data: charged
          ? [{ ...fixture, id: 'pi_found_1', status: 'succeeded', metadata: { agentsite_purchase_id: first!.id } }]
          : [],
      };
    });
    expect((await billing(user)).credits).toBe(before + 400);
    const searched = proxy.requests({ path: /^\/v1\/payment_intents\/search$/ });
    expect(searched.map((r) => r.query.query)).toEqual(
      expect.arrayContaining([
        `metadata['agentsite_purchase_id']:'${first!.id}'`,
        `metadata['agentsite_purchase_id']:'${second!.id}'`,
      ]),
    );
    // Newest first by when they were made (the second now reads as two hours old).
    const settled = (await http.get('/api/billing/purchases', { token: user.token })).body.items;
    expect(settled.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([
      [first!.id, 'succeeded'],
      [second!.id, 'failed'],
    ]);
    // Settled ones are not asked again, and the credits stay granted once.
    proxy.clear();
    expect((await billing(user)).credits).toBe(before + 400);
    expect(proxy.requests()).toHaveLength(0);
  });

  it('a declined card is PAYMENT_FAILED: the purchase is failed and nothing is granted, even by its failure event', async () => {
    const user = await withCard();
    const before = (await billing(user)).credits as number;
    const rows = await ledgerRows(user.id);
    proxy.fail({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, 402, {
      error: {
        type: 'card_error',
        code: 'card_declined',
        decline_code: 'insufficient_funds',
        message: 'Your card has insufficient funds.',
      },
    });
    const declined = await http.post('/api/billing/credits/purchase', { amount: 300 }, { token: user.token });
    expectError(declined, 'PAYMENT_FAILED', 402);
    expect(declined.body.error).toContain('insufficient_funds');
    // stripe-mock's own answer: a PaymentIntent left needing another card is declined too.
    expectError(
      await http.post('/api/billing/credits/purchase', { amount: 300 }, { token: user.token }),
      'PAYMENT_FAILED',
      402,
    );
    const purchases = (await http.get('/api/billing/purchases', { token: user.token })).body.items;
    expect(purchases.map((p: { status: string }) => p.status)).toEqual(['failed', 'failed']);
    const failedEvent = stripeEvent('payment_intent.payment_failed', {
      id: 'pi_declined_1',
      object: 'payment_intent',
      amount: 300,
      metadata: { agentsite_purchase_id: purchases[0].id, agentsite_user_id: user.id },
      last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' },
    });
    expect((await deliver(failedEvent)).status).toBe(200);
    expect((await billing(user)).credits).toBe(before);
    expect(await ledgerRows(user.id)).toBe(rows);
  });

  it('a subscription: a renewal that fails makes it past_due (SUBSCRIPTION_PAST_DUE), a paid invoice active again; late events change nothing', async () => {
    const user = await withCard();
    const subscribed = await http.post('/api/billing/subscription', { tier: 'harness' }, { token: user.token });
    expect(subscribed.body).toMatchObject({ tier: 'harness', subscriptionStatus: 'active' });
    const created = proxy.requests().find((r) => r.method === 'POST' && r.path === '/v1/subscriptions')!;
    expect(created).toMatchObject({
      idempotencyKey: expect.stringMatching(new RegExp(`^agentsite-subscribe-${user.id}-`)),
      form: {
        'items[0][price]': TEST_STRIPE_PRICES.harness,
        payment_behavior: 'error_if_incomplete',
        default_payment_method: 'pm_card_visa',
      },
    });
    const { customer_id: customer, subscription_id: subscription } = (await customerRow(user.id))!;
    expect(subscription).toMatch(/^sub_/);
    const invoice = (type: string, created: number) =>
      stripeEvent(
        type,
        { id: 'in_1', object: 'invoice', customer, parent: { subscription_details: { subscription } } },
        { created },
      );
    const webhookAgent = () =>
      http.post(
        '/api/agents',
        { name: 'hook', systemPrompt: 'p', siteIds: [], trigger: { type: 'webhook', schema: [] } },
        { token: user.token },
      );

    expect((await deliver(invoice('invoice.payment_failed', at(10)))).status).toBe(200);
    expect(await billing(user)).toMatchObject({
      tier: 'harness',
      subscriptionStatus: 'past_due',
      limits: { webhookAgents: false },
    });
    expectError(await webhookAgent(), 'SUBSCRIPTION_PAST_DUE', 402);

    // "Pay now": the same tier asked for again pays the subscription's open invoice with the card.
    // stripe-mock answers every subscription with its fixture: shown here as this one, past due.
    proxy.rewrite({ method: 'GET', path: /^\/v1\/subscriptions\/sub_/, once: true }, (fixture) => {
      const item = (fixture.items as { data: Array<Record<string, unknown>> }).data[0]!;
      return {
        ...fixture,
        id: subscription,
        status: 'past_due',
        latest_invoice: 'in_open_1',
        items: { data: [{ ...item, price: { ...(item.price as object), id: TEST_STRIPE_PRICES.harness } }] },
      };
    });
    const paid = await http.post('/api/billing/subscription', { tier: 'harness' }, { token: user.token });
    expect(paid.body).toMatchObject({ tier: 'harness', subscriptionStatus: 'active' });
    expect(proxy.requests().find((r) => r.path === '/v1/invoices/in_open_1/pay')).toMatchObject({
      idempotencyKey: expect.stringMatching(/^agentsite-pay-in_open_1-/),
      form: { payment_method: 'pm_card_visa', off_session: 'true' },
    });
    expect((await webhookAgent()).status).toBe(201);

    // The next renewal fails, then Stripe's retry is paid.
    await deliver(invoice('invoice.payment_failed', at(12)));
    expect((await billing(user)).subscriptionStatus).toBe('past_due');
    expect((await deliver(invoice('invoice.paid', at(20)))).status).toBe(200);
    expect(await billing(user)).toMatchObject({ subscriptionStatus: 'active', limits: { webhookAgents: true } });
    expect((await webhookAgent()).status).toBe(201);

    // A failure older than the payment, delivered late; and an invoice of another subscription.
    await deliver(invoice('invoice.payment_failed', at(15)));
    await deliver(
      stripeEvent(
        'invoice.payment_failed',
        { id: 'in_2', customer, parent: { subscription_details: { subscription: 'sub_someone_else' } } },
        { created: at(30) },
      ),
    );
    expect((await billing(user)).subscriptionStatus).toBe('active');

    // The tier changes at Stripe (a price change from the dashboard): the tier follows.
    await deliver(
      stripeEvent(
        'customer.subscription.updated',
        { id: subscription, customer, status: 'active', items: { data: [{ price: { id: TEST_STRIPE_PRICES.team } }] } },
        { created: at(40) },
      ),
    );
    expect((await billing(user)).tier).toBe('team');
  });

  it('a subscription cancelled at Stripe moves the user to free; going free through the API cancels it', async () => {
    const user = await withCard();
    await http.post('/api/billing/subscription', { tier: 'pro' }, { token: user.token });
    const { customer_id: customer, subscription_id: subscription } = (await customerRow(user.id))!;
    const deleted = stripeEvent(
      'customer.subscription.deleted',
      { id: subscription, customer, status: 'canceled', items: { data: [{ price: { id: TEST_STRIPE_PRICES.pro } }] } },
      { created: at(10) },
    );
    expect((await deliver(deleted)).status).toBe(200);
    expect(await billing(user)).toMatchObject({ tier: 'free', subscriptionStatus: 'canceled' });
    expect((await customerRow(user.id))!.subscription_id).toBeNull();

    // Subscribing again starts a new subscription; going back to free cancels it at Stripe.
    proxy.clear();
    expect((await http.post('/api/billing/subscription', { tier: 'pro' }, { token: user.token })).body).toMatchObject({
      tier: 'pro',
      subscriptionStatus: 'active',
    });
    expect(proxy.requests().filter((r) => r.method === 'POST' && r.path === '/v1/subscriptions')).toHaveLength(1);
    const second = (await customerRow(user.id))!.subscription_id;
    const free = await http.post('/api/billing/subscription', { tier: 'free' }, { token: user.token });
    expect(free.body).toMatchObject({ tier: 'free', subscriptionStatus: 'active' });
    expect(
      proxy.requests().find((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${second}`),
    ).toBeDefined();
    expect((await customerRow(user.id))!.subscription_id).toBeNull();
  });

  it('a subscription Stripe started but the service never recorded (a crash) is adopted from its event', async () => {
    const user = await withCard();
    await http.post('/api/billing/subscription', { tier: 'pro' }, { token: user.token });
    const { customer_id: customer, subscription_id: subscription } = (await customerRow(user.id))!;
    // As if the process had stopped between Stripe's answer and the commit.
    await sql("UPDATE users SET tier = 'free' WHERE id = $1", [user.id]);
    await sql('UPDATE billing_customers SET subscription_id = NULL, status_event_at = NULL WHERE user_id = $1', [
      user.id,
    ]);
    await deliver(
      stripeEvent(
        'customer.subscription.created',
        { id: subscription, customer, status: 'active', items: { data: [{ price: { id: TEST_STRIPE_PRICES.pro } }] } },
        { created: at(5) },
      ),
    );
    expect(await billing(user)).toMatchObject({ tier: 'pro', subscriptionStatus: 'active' });
    expect((await customerRow(user.id))!.subscription_id).toBe(subscription);
  });

  it('a declined subscription payment is PAYMENT_FAILED and leaves the tier as it was', async () => {
    const user = await withCard();
    proxy.fail({ method: 'POST', path: /^\/v1\/subscriptions$/, once: true }, 402, {
      error: {
        type: 'card_error',
        code: 'card_declined',
        decline_code: 'generic_decline',
        message: 'Your card was declined.',
      },
    });
    expectError(
      await http.post('/api/billing/subscription', { tier: 'team' }, { token: user.token }),
      'PAYMENT_FAILED',
      402,
    );
    expect(await billing(user)).toMatchObject({ tier: 'free', subscriptionStatus: 'active' });
    expect((await customerRow(user.id))!.subscription_id).toBeNull();
  });

  it('refuses forged, unsigned and malformed events, and changes nothing', async () => {
    const user = await withCard();
    const rows = await ledgerRows(user.id);
    const before = await billing(user);
    const forged = succeeded({ id: '6f1d1f43-2a56-4a49-9f0a-5a9b8c7d6e5f', amountCents: 500 }, user, 'pi_forged');
    expectError(await deliver(forged, 'whsec_not_the_endpoint_secret'), 'WEBHOOK_SECRET_INVALID', 401);
    const unsigned = await http.request('POST', '/api/webhooks/stripe', {
      rawBody: JSON.stringify(forged),
      headers: { 'content-type': 'application/json' },
    });
    expectError(unsigned, 'WEBHOOK_SECRET_INVALID', 401);
    const { customer_id: customer } = (await customerRow(user.id))!;
    const demote = stripeEvent(
      'customer.subscription.deleted',
      { id: 'sub_x', customer, status: 'canceled' },
      { created: at(10) },
    );
    const tampered = signStripeEvent(demote, webhookSecret);
    const altered = await http.request('POST', '/api/webhooks/stripe', {
      rawBody: tampered.payload.replace('"canceled"', '"active"'),
      headers: { 'content-type': 'application/json', 'stripe-signature': tampered.signature },
    });
    expectError(altered, 'WEBHOOK_SECRET_INVALID', 401);
    // Signed, but not an event: refused as a payload, not applied.
    const malformed = await http.request('POST', '/api/webhooks/stripe', {
      rawBody: '{not json',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: '{not json', secret: webhookSecret }),
      },
    });
    expectError(malformed, 'WEBHOOK_PAYLOAD_INVALID', 422);
    expect(await billing(user)).toEqual(before);
    expect(await ledgerRows(user.id)).toBe(rows);
    const recorded = await sql<{ n: number }>('SELECT count(*)::int AS n FROM billing_events WHERE id = $1', [
      forged.id,
    ]);
    expect(recorded[0]!.n).toBe(0);
  });

  it('counts events applied, repeated and refused, and purchases as they settle, in the metrics', async () => {
    const series = async (): Promise<string> =>
      (await http.get('/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
    const value = (text: string, line: string): number =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${line} `))
          ?.split(' ')[1] ?? 0,
      );
    const applied = 'agentsite_payment_events_total{type="payment_intent.succeeded",outcome="applied",code="none"}';
    const duplicate = 'agentsite_payment_events_total{type="payment_intent.succeeded",outcome="duplicate",code="none"}';
    const refused = 'agentsite_payment_events_total{type="unread",outcome="refused",code="WEBHOOK_SECRET_INVALID"}';
    const granted = 'agentsite_credit_purchases_total{outcome="succeeded"}';
    const before = await series();

    const user = await withCard();
    proxy.rewrite({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, (intent) => ({
      ...intent,
      status: 'processing',
    }));
    const purchase = (await http.post('/api/billing/credits/purchase', { amount: 100 }, { token: user.token })).body
      .purchase;
    const event = succeeded(purchase, user, 'pi_metrics_1');
    await deliver(event);
    await deliver(event);
    await deliver(event, 'whsec_forged_for_the_metrics');

    const after = await series();
    expect(value(after, applied) - value(before, applied)).toBe(1);
    expect(value(after, duplicate) - value(before, duplicate)).toBe(1);
    expect(value(after, refused) - value(before, refused)).toBe(1);
    expect(value(after, granted) - value(before, granted)).toBe(1);
  });
});
