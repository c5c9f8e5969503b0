import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, Http } from '../utils/http.js';
import { sql } from '../utils/db.js';
import { Stack } from '../utils/stack.js';
import { registerUser } from '../utils/users.js';

/** PAYMENT_PROVIDER unset, as in docker compose and the image: `''` removes the test suites' default. */
const NO_PAYMENTS = { PAYMENT_PROVIDER: '', ALLOW_TEST_PAYMENTS: '' };

describe('payments: the provider is a setting, and none by default (e2e)', () => {
  let stack: Stack;
  let http: Http;

  beforeAll(async () => {
    stack = await Stack.start({ worker: false, env: NO_PAYMENTS });
    http = new Http(stack.baseUrl);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('without PAYMENT_PROVIDER: card attach, purchases and paid tiers answer PAYMENT_FAILED and grant nothing', async () => {
    const user = await registerUser(http);
    const before = (await http.get('/api/billing', { token: user.token })).body;
    const ledgerBefore = await sql<{ n: number }>('SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1', [
      user.id,
    ]);

    const attach = await http.post(
      '/api/billing/payment-method',
      { paymentMethodToken: 'tok_visa' },
      { token: user.token },
    );
    expectError(attach, 'PAYMENT_FAILED', 402);
    expect(attach.body.error).toBe('payments are not configured on this server');
    for (const [path, body] of [
      ['/api/billing/credits/purchase', { amount: 1_000_000 }],
      ['/api/billing/subscription', { tier: 'team' }],
      ['/api/billing/subscription', { tier: 'pro' }],
    ] as const) {
      const res = await http.post(path, body, { token: user.token });
      expectError(res, 'PAYMENT_FAILED', 402);
      expect(res.body.error).toBe('payments are not configured on this server');
    }

    // A card stored while the server ran with the test provider is no way around it either.
    await sql('UPDATE users SET payment_method = $2 WHERE id = $1', [
      user.id,
      JSON.stringify({ brand: 'visa', last4: '4242', ref: 'pm_test_tok_visa_12345678' }),
    ]);
    expectError(
      await http.post('/api/billing/credits/purchase', { amount: 500 }, { token: user.token }),
      'PAYMENT_FAILED',
      402,
    );
    expectError(
      await http.post('/api/billing/subscription', { tier: 'team' }, { token: user.token }),
      'PAYMENT_FAILED',
      402,
    );

    const after = (await http.get('/api/billing', { token: user.token })).body;
    expect({ tier: after.tier, credits: after.credits, subscriptionStatus: after.subscriptionStatus }).toEqual({
      tier: before.tier,
      credits: before.credits,
      subscriptionStatus: before.subscriptionStatus,
    });
    expect(before.paymentMethod).toBeNull();
    const ledgerAfter = await sql<{ n: number }>('SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1', [
      user.id,
    ]);
    expect(ledgerAfter).toEqual(ledgerBefore);
    // Going down to free costs nothing and needs no provider.
    expect((await http.post('/api/billing/subscription', { tier: 'free' }, { token: user.token })).status).toBe(200);
    expect(after).toMatchObject({ provider: 'none', publishableKey: null });
    expectError(await http.post('/api/billing/setup-intent', {}, { token: user.token }), 'PAYMENT_FAILED', 402);
    // No provider, no provider events: the Stripe route is not there, whatever is sent to it.
    const event = await http.request('POST', '/api/webhooks/stripe', {
      rawBody: JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded' }),
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
    });
    expectError(event, 'NOT_FOUND', 404);
    expect((await http.get('/api/billing/purchases', { token: user.token })).body).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it('PAYMENT_PROVIDER=test without ALLOW_TEST_PAYMENTS: the API refuses to start, naming both settings', async () => {
    let failure: unknown;
    try {
      const refused = await Stack.start({ worker: false, env: { PAYMENT_PROVIDER: 'test', ALLOW_TEST_PAYMENTS: '' } });
      await refused.stop();
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).toMatch(/API exited with 1/);
    expect(String(failure)).toMatch(/PAYMENT_PROVIDER=test.*ALLOW_TEST_PAYMENTS=true/s);
  });
});
