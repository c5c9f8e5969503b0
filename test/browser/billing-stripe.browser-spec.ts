/**
 * Plan & credits under PAYMENT_PROVIDER=stripe, against stripe-mock (test/utils/stripe.ts). Stripe.js
 * cannot be fetched on these machines: one profile finds js.stripe.com unreachable (the console falls
 * back to typing a payment method id), another gets a stand-in Stripe.js from the browser's router
 * (it proves the Content-Security-Policy lets Stripe's script run and the SetupIntent round trip).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { stripeEnv, StripeProxy, stripeEvent, type StripeTestEnv, deliverStripeEvent } from '../utils/stripe.js';
import { expectAccessible, screenshot, signUp, startConsoleWorld, tokenOf, type ConsoleWorld } from './harness.js';
import { addPaymentMethod, changePlan, openBilling, purchaseRows, shownBalance } from './steps/billing.js';

const STRIPE_JS = 'https://js.stripe.com/v3/';

/**
 * Stands in for Stripe.js: a card "field" (a plain input) and confirmCardSetup, which answers the
 * PaymentMethod stripe-mock knows (pm_card_visa) or Stripe's decline for the test card 4000…0002.
 * It records the client secret it was given, to show that the console fetched a SetupIntent first.
 */
const FAKE_STRIPE_JS = `
window.Stripe = function (publishableKey) {
  window.__stripe = { publishableKey: publishableKey, secrets: [] };
  var input;
  return {
    elements: function () {
      return {
        create: function () {
          return {
            mount: function (target) {
              input = document.createElement('input');
              input.setAttribute('aria-label', 'Card number');
              target.appendChild(input);
            },
            destroy: function () { if (input) { input.remove(); } },
            on: function () {},
          };
        },
      };
    },
    confirmCardSetup: function (clientSecret, data) {
      window.__stripe.secrets.push(clientSecret);
      if (!data || !data.payment_method || !data.payment_method.card) {
        return Promise.resolve({ error: { message: 'no card element', code: 'integration_error' } });
      }
      if (input.value === '4000000000000002') {
        return Promise.resolve({ error: { message: 'Your card was declined.', code: 'card_declined' } });
      }
      return Promise.resolve({ setupIntent: { status: 'succeeded', payment_method: 'pm_card_visa' } });
    },
  };
};
`;

describe('console: plan & credits with the Stripe provider (stripe-mock)', () => {
  let w: ConsoleWorld;
  let stripe: StripeTestEnv;
  /** In front of stripe-mock, to turn a charge's answer into `processing` (stripe-mock never settles one). */
  let proxy: StripeProxy;

  beforeAll(async () => {
    proxy = await StripeProxy.start();
    stripe = stripeEnv({ apiBase: proxy.url, env: { STRIPE_PUBLISHABLE_KEY: 'pk_test_console' } });
    w = await startConsoleWorld({ env: stripe.env });
  });

  afterAll(async () => {
    await w?.stop();
    await proxy?.close();
  });

  async function pageWithout(route: (context: BrowserContext) => Promise<unknown>): Promise<Page> {
    const context = await w.newContext();
    await route(context);
    return context.newPage();
  }

  it('falls back to a payment method id where Stripe.js cannot load; pm_card_visa stores a Visa; a declined charge is shown and listed', async () => {
    const page = await pageWithout((context) => context.route('https://js.stripe.com/**', (r) => r.abort()));
    await signUp(page);
    await openBilling(page);
    const unavailable = page.getByTestId('stripe-card-unavailable');
    await expect(unavailable.textContent()).resolves.toContain(
      'Stripe.js could not be loaded from https://js.stripe.com/v3/',
    );
    // A test key: the hint names Stripe's test ids.
    const hint = await page.getByRole('region', { name: 'Payment method' }).locator('.hint').allTextContents();
    expect(hint.join(' ')).toMatch(/pm_card_visa.*tok_visa.*pm_card_chargeDeclined/);
    // Stripe's smallest charge, in the form.
    await expect(page.getByLabel('Credits to buy').getAttribute('min')).resolves.toBe('50');
    await page.getByText('At least 50 credits ($0.50)').waitFor();

    await addPaymentMethod(page, 'pm_card_visa');
    await expect(page.getByTestId('payment-method').textContent()).resolves.toBe('visa ending in 4242');

    // stripe-mock never lets a PaymentIntent succeed (requires_payment_method): declined, nothing added.
    const buy = page.getByRole('region', { name: 'Buy credits' });
    await page.getByLabel('Credits to buy').fill('500');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await expect(buy.getByRole('alert').textContent()).resolves.toContain('PAYMENT_FAILED');
    expect(await shownBalance(page)).toBe(100);
    await expect(purchaseRows(page)).resolves.toEqual([{ credits: '500', amount: '$5.00', status: 'failed' }]);
    const listed = await w.http.get('/api/billing/purchases', { token: await tokenOf(page) });
    expect(listed.body.items).toMatchObject([{ credits: 500, amountCents: 500, status: 'failed' }]);

    // A subscription: stripe-mock's answers it active.
    // Asked first: a Stripe subscription charges its first month now, then monthly.
    const asked = await changePlan(page, 'pro');
    expect(asked.charge).toContain('the first month is charged now');
    expect(asked.charge).toContain('then the same each month');

    await expectAccessible(page, 'plan & credits (Stripe, no Stripe.js)');
    await page.close();
  });

  it('with Stripe.js (a stand-in served for js.stripe.com): confirms a SetupIntent from the API and stores its card; shows Stripe’s refusal', async () => {
    const page = await pageWithout((context) =>
      context.route(STRIPE_JS, (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: FAKE_STRIPE_JS })),
    );
    await signUp(page);
    await openBilling(page);
    const card = page.getByLabel('Card number');
    await card.waitFor();
    await expect(page.getByTestId('stripe-card-unavailable').count()).resolves.toBe(0);
    await expect(page.getByLabel(/payment method token/i).count()).resolves.toBe(0);

    await card.fill('4000000000000002');
    await page.getByRole('button', { name: 'Add payment method' }).click();
    const region = page.getByRole('region', { name: 'Payment method' });
    // Stripe's words for the person; its code only in the details for support.
    const refusal = region.getByRole('alert');
    await expect(refusal.locator('p').innerText()).resolves.toBe('Stripe refused the card: Your card was declined.');
    await expect(refusal.getAttribute('data-code')).resolves.toBe('card_declined');
    await expect(refusal.locator('details').textContent()).resolves.toContain('card_declined');
    await expect(page.getByTestId('payment-method').textContent()).resolves.toBe('No payment method yet.');

    await card.fill('4242424242424242');
    await page.getByRole('button', { name: 'Add payment method' }).click();
    await page.getByRole('status').filter({ hasText: 'Payment method stored.' }).waitFor();
    await expect(page.getByTestId('payment-method').textContent()).resolves.toBe('visa ending in 4242');
    const stripe = await page.evaluate(
      () => (globalThis as unknown as { __stripe: { publishableKey: string; secrets: string[] } }).__stripe,
    );
    // Stripe.js was started with the server's key, and each confirmation used a SetupIntent the API made.
    expect(stripe.publishableKey).toBe('pk_test_console');
    expect(stripe.secrets).toHaveLength(2);
    for (const secret of stripe.secrets) {
      expect(secret).toMatch(/^seti_\w+_secret_\w+$/);
    }
    await expectAccessible(page, 'plan & credits (Stripe.js card field)');
    await page.close();
  });

  it('shows a processing purchase as pending, and as succeeded with its credits after Stripe’s event and Refresh', async () => {
    const page = await pageWithout((context) => context.route('https://js.stripe.com/**', (r) => r.abort()));
    await signUp(page);
    await openBilling(page);
    await addPaymentMethod(page, 'pm_card_visa');
    // The charge's answer says the payment is processing (a bank debit, a slow network): Stripe's event settles it.
    let intentId: string | undefined;
    proxy.rewrite({ method: 'POST', path: /^\/v1\/payment_intents$/, once: true }, (intent) => {
      intentId = String(intent.id);
      return { ...intent, status: 'processing' };
    });
    await page.getByLabel('Credits to buy').fill('500');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Payment processing: the 500 credits are added when the payment is confirmed.' })
      .waitFor();
    expect(await shownBalance(page)).toBe(100);
    await expect(purchaseRows(page)).resolves.toEqual([{ credits: '500', amount: '$5.00', status: 'processing' }]);
    await expect(page.getByRole('region', { name: 'Purchases' }).textContent()).resolves.toContain(
      'A payment is processing',
    );
    expect(intentId).toMatch(/^pi_/);
    await screenshot(page, 'billing-stripe');

    // Stripe's payment_intent.succeeded, signed with the endpoint's secret, as Stripe delivers it.
    const token = await tokenOf(page);
    const [me, purchases] = await Promise.all([
      w.http.get('/api/me', { token }),
      w.http.get('/api/billing/purchases', { token }),
    ]);
    const purchase = purchases.body.items[0] as { id: string; amountCents: number };
    const event = stripeEvent('payment_intent.succeeded', {
      id: intentId,
      object: 'payment_intent',
      status: 'succeeded',
      amount: purchase.amountCents,
      amount_received: purchase.amountCents,
      currency: 'usd',
      metadata: { agentsite_purchase_id: purchase.id, agentsite_user_id: me.body.id },
    });
    const delivered = await deliverStripeEvent(`${w.stack.baseUrl}/api/webhooks/stripe`, event, stripe.webhookSecret);
    expect(delivered.status).toBe(200);

    await page.getByRole('button', { name: 'Refresh purchases' }).click();
    await page.getByRole('region', { name: 'Purchases' }).getByText('succeeded').waitFor();
    await expect(purchaseRows(page)).resolves.toEqual([{ credits: '500', amount: '$5.00', status: 'succeeded' }]);
    expect(await shownBalance(page)).toBe(600);
    const newest = page.getByRole('table', { name: 'Credit ledger' }).getByRole('row').nth(1).getByRole('cell');
    await expect(newest.allTextContents()).resolves.toEqual([expect.any(String), 'Purchase', '+500', '600']);
    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
});
