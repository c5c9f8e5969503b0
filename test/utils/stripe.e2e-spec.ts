import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { loadSettings } from '../../src/config/settings.js';
import { TEST_ENV } from '../setup/shared-runtime.js';
import {
  CARD_DECLINED,
  StripeProxy,
  TEST_STRIPE_SECRET_KEY,
  newWebhookSecret,
  signStripeEvent,
  stripeClient,
  stripeEnv,
  stripeEvent,
  stripeHostOptions,
  stripeMockApiBase,
} from './stripe.js';

describe('stripeEnv', () => {
  it("is a complete Stripe configuration the service's settings accept, on the run's stripe-mock", () => {
    const first = stripeEnv();
    const second = stripeEnv();
    expect(first.apiBase).toBe(stripeMockApiBase());
    expect(first.apiBase).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.webhookSecret).toMatch(/^whsec_/);
    expect(second.webhookSecret).not.toBe(first.webhookSecret);
    const settings = loadSettings({
      ...first.env,
      JWT_SECRET: 'x'.repeat(40),
      VAULT_KEY: `t1:${Buffer.alloc(32, 1).toString('base64')}`,
      TEMPORAL_CODEC_KEY: `t1:${Buffer.alloc(32, 2).toString('base64')}`,
    });
    expect(settings.paymentProvider).toBe('stripe');
    expect(settings.allowTestPayments).toBe(false);
    expect(settings.stripe).toMatchObject({
      secretKey: first.secretKey,
      webhookSecret: first.webhookSecret,
      prices: first.prices,
    });
    expect(String(settings.stripe?.apiBase)).toMatch(new RegExp(`^${first.apiBase}/?$`));
  });

  it('takes another API base (a proxy) and extra env last', () => {
    const config = stripeEnv({ apiBase: 'http://127.0.0.1:1', env: { STRIPE_PUBLISHABLE_KEY: 'pk_test_1' } });
    expect(config.env).toMatchObject({ STRIPE_API_BASE: 'http://127.0.0.1:1', STRIPE_PUBLISHABLE_KEY: 'pk_test_1' });
  });

  it("fails with the setup's message when stripe-mock could not be had", () => {
    const saved = { base: process.env[TEST_ENV.stripeApiBase], problem: process.env[TEST_ENV.stripeProblem] };
    delete process.env[TEST_ENV.stripeApiBase];
    process.env[TEST_ENV.stripeProblem] = 'stripe-mock is not available: no Go toolchain is on PATH';
    try {
      expect(() => stripeEnv()).toThrow('stripe-mock is not available: no Go toolchain is on PATH');
    } finally {
      // process.env keeps strings only: undefined must be deleted, not assigned.
      for (const [name, value] of [
        [TEST_ENV.stripeApiBase, saved.base],
        [TEST_ENV.stripeProblem, saved.problem],
      ] as const) {
        if (value === undefined) {
          delete process.env[name];
        } else {
          process.env[name] = value;
        }
      }
    }
  });
});

describe('stripeHostOptions', () => {
  it("turns a URL into the SDK's host, port and protocol", () => {
    expect(stripeHostOptions('http://127.0.0.1:12111')).toEqual({ host: '127.0.0.1', port: 12111, protocol: 'http' });
    expect(stripeHostOptions('https://api.stripe.com')).toEqual({
      host: 'api.stripe.com',
      port: 443,
      protocol: 'https',
    });
  });
});

describe('stripeEvent and signStripeEvent', () => {
  const verifier = new Stripe(TEST_STRIPE_SECRET_KEY);
  const intent = { id: 'pi_123', object: 'payment_intent', status: 'succeeded', metadata: { purchase_id: 'p1' } };

  it("make an event in Stripe's shape whose signature the SDK verifies", () => {
    const secret = newWebhookSecret();
    const event = stripeEvent('payment_intent.succeeded', intent);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: expect.any(Number),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: 'payment_intent.succeeded',
      data: { object: intent },
    });
    expect(Math.abs(event.created - Date.now() / 1000)).toBeLessThan(5);
    expect(stripeEvent('payment_intent.succeeded', intent).id).not.toBe(event.id);
    expect(stripeEvent('x', {}, { created: 1_700_000_000 }).created).toBe(1_700_000_000);

    const { payload, signature } = signStripeEvent(event, secret);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const verified = verifier.webhooks.constructEvent(payload, signature, secret);
    expect(verified).toEqual(event);
  });

  it('make forged and replayed deliveries the SDK refuses', () => {
    const secret = newWebhookSecret();
    const event = stripeEvent('payment_intent.succeeded', intent);
    const forged = signStripeEvent(event, secret, { forged: true });
    expect(() => verifier.webhooks.constructEvent(forged.payload, forged.signature, secret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const right = signStripeEvent(event, secret);
    expect(() => verifier.webhooks.constructEvent(right.payload, right.signature, newWebhookSecret())).toThrow(
      /No signatures found matching the expected signature/,
    );
    const replayed = signStripeEvent(event, secret, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(() => verifier.webhooks.constructEvent(replayed.payload, replayed.signature, secret)).toThrow(
      /Timestamp outside the tolerance zone/,
    );
    const tampered = right.payload.replace('"succeeded"', '"canceled"');
    expect(() => verifier.webhooks.constructEvent(tampered, right.signature, secret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });
});

describe('StripeProxy, with the real SDK calling stripe-mock through it', () => {
  let proxy: StripeProxy;
  let stripe: Stripe;

  beforeAll(async () => {
    proxy = await StripeProxy.start();
    stripe = stripeClient(proxy.url);
  });
  // Without stripe-mock, beforeAll fails with its message and there is no proxy to clean up.
  afterEach(() => (proxy as StripeProxy | undefined)?.clear());
  afterAll(async () => (proxy as StripeProxy | undefined)?.close());

  it('forwards requests unchanged and records method, path, form body and idempotency key', async () => {
    const intent = await stripe.paymentIntents.create(
      {
        amount: 500,
        currency: 'usd',
        metadata: { purchase_id: 'pur_1' },
        payment_method: 'pm_card_visa',
        confirm: true,
      },
      { idempotencyKey: 'purchase-pur_1' },
    );
    expect(intent).toMatchObject({ object: 'payment_intent', amount: 500, status: 'requires_payment_method' });
    await stripe.customers.list({ limit: 3 });
    expect(proxy.requests()).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/v1/payment_intents',
        idempotencyKey: 'purchase-pur_1',
        form: {
          amount: '500',
          currency: 'usd',
          'metadata[purchase_id]': 'pur_1',
          payment_method: 'pm_card_visa',
          confirm: 'true',
        },
        status: 200,
      }),
      expect.objectContaining({ method: 'GET', path: '/v1/customers', query: { limit: '3' }, form: {} }),
    ]);
    expect(proxy.requests({ method: 'GET', path: /^\/v1\/customers$/ })).toHaveLength(1);
    expect(proxy.requests()[0].headers.authorization).toBe(`Bearer ${TEST_STRIPE_SECRET_KEY}`);
  });

  it('holds an answer until released, while other requests pass', async () => {
    const held = proxy.hold({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true });
    let answered = false;
    const creating = stripe.paymentIntents.create({ amount: 100, currency: 'usd' }).then((intent) => {
      answered = true;
      return intent;
    });
    const reached = await held.reached;
    expect(reached.form).toMatchObject({ amount: '100', currency: 'usd' });
    // A whole other round trip completes while the first answer is held.
    await stripe.customers.list();
    expect(answered).toBe(false);
    held.release();
    await expect(creating).resolves.toMatchObject({ object: 'payment_intent', amount: 100 });
    // `once`: the next one is not held.
    await expect(stripe.paymentIntents.create({ amount: 200, currency: 'usd' })).resolves.toMatchObject({
      amount: 200,
    });
  });

  it('rewrites JSON answers of matching requests only', async () => {
    proxy.rewrite({ method: 'POST', path: /^\/v1\/payment_intents\/[^/]+\/confirm$/ }, (body) => {
      body.status = 'succeeded';
    });
    proxy.rewrite({ method: 'GET', path: /^\/v1\/payment_intents\/[^/]+$/, once: true }, (body) => ({
      ...body,
      status: 'processing',
    }));
    await expect(stripe.paymentIntents.confirm('pi_1')).resolves.toMatchObject({ status: 'succeeded' });
    await expect(stripe.paymentIntents.confirm('pi_2')).resolves.toMatchObject({ status: 'succeeded' });
    await expect(stripe.paymentIntents.retrieve('pi_1')).resolves.toMatchObject({ status: 'processing' });
    await expect(stripe.paymentIntents.retrieve('pi_1')).resolves.toMatchObject({
      status: 'requires_payment_method',
    });
  });

  it("fails matching requests with Stripe's error body, without forwarding them", async () => {
    proxy.fail({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, 402, CARD_DECLINED);
    const declined = await stripe.paymentIntents.create({ amount: 100, currency: 'usd' }).catch((err: unknown) => err);
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(declined).toMatchObject({
      statusCode: 402,
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
    });
    expect(proxy.requests()).toEqual([expect.objectContaining({ path: '/v1/payment_intents', status: 402 })]);
    await expect(stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).resolves.toMatchObject({
      object: 'payment_intent',
    });
  });

  it('clear() forgets requests and rules and lets held answers go', async () => {
    const held = proxy.hold({ path: /^\/v1\/customers$/ });
    const listing = stripe.customers.list();
    await held.reached;
    proxy.clear();
    await expect(listing).resolves.toMatchObject({ object: 'list' });
    expect(proxy.requests()).toEqual([]);
    await stripe.customers.list();
    expect(proxy.requests()).toHaveLength(1);
  });
});
