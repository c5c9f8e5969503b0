import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { registerUser } from '../utils/users.js';
import {
  expectAccessible,
  screenshot,
  signIn,
  signUp,
  startConsoleWorld,
  tokenOf,
  type ConsoleWorld,
  WIDTHS,
} from './harness.js';
import { sql } from '../utils/db.js';
import {
  addPaymentMethod,
  adminRow,
  adminSetsUser,
  buyCredits,
  acceptInvitation,
  changePlan,
  inviteMember,
  openBilling,
  openWorkspace,
  purchaseRows,
  setTierByApi,
  shownBalance,
} from './steps/billing.js';

describe('console: plan & credits, workspaces, admin', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  it('buys credits: refusals shown in place, then the balance and the ledger follow; changes the subscription', async () => {
    const page = await w.newPage();
    await signUp(page);
    await openBilling(page);
    expect(await shownBalance(page)).toBe(100);
    await page
      .getByRole('table', { name: 'Credit ledger' })
      .getByRole('cell', { name: 'Credits for signing up' })
      .waitFor();

    const card = page.getByRole('region', { name: 'Payment method' });
    const buy = page.getByRole('region', { name: 'Buy credits' });
    // No card: said before anything is tried, and Buy is not offered.
    await expect(buy.getByTestId('buy-needs-card').textContent()).resolves.toContain(
      'Add a payment method above first',
    );
    await expect(page.getByRole('button', { name: 'Buy credits' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Payment method token').fill('tok_unknown');
    await page.getByRole('button', { name: 'Add payment method' }).click();
    await expect(card.getByRole('alert').textContent()).resolves.toContain('VALIDATION_ERROR');
    await expect(page.getByLabel('Payment method token').getAttribute('aria-invalid')).resolves.toBe('true');

    await addPaymentMethod(page, 'tok_chargeDeclined');
    await page.getByText('ending in 0002').waitFor();
    await page.getByLabel('Credits to buy').fill('300');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await expect(buy.getByRole('alert').textContent()).resolves.toContain('PAYMENT_FAILED');
    expect(await shownBalance(page)).toBe(100);

    await addPaymentMethod(page, 'tok_visa');
    await page.getByText('ending in 4242').waitFor();
    expect(await buyCredits(page, 300)).toBe(400);
    // The page a reload shows agrees with the API.
    const billing = await w.http.get('/api/billing', { token: await tokenOf(page) });
    expect(billing.body.credits).toBe(400);
    // The test provider settles at once: the purchase is listed as succeeded; the declined one as failed.
    await expect(purchaseRows(page)).resolves.toEqual([
      { credits: '300', amount: '$3.00', status: 'succeeded' },
      { credits: '300', amount: '$3.00', status: 'failed' },
    ]);
    await expect(page.getByLabel('Credits to buy').getAttribute('min')).resolves.toBe('1');

    await changePlan(page, 'pro');

    // A failed renewal: past due, with the free tier's limits, until "Pay now" charges the card again.
    const me = await w.http.get('/api/me', { token: await tokenOf(page) });
    await w.http.patch(`/api/admin/users/${me.body.id}`, { subscriptionStatus: 'past_due' }, { token: w.admin.token });
    await openBilling(page);
    await page.getByText('The last payment of your pro subscription failed').waitFor();
    await page.getByRole('button', { name: 'Pay now' }).click();
    await page.getByRole('status').filter({ hasText: 'Paid: the subscription is active.' }).waitFor();
    await expect(page.getByRole('button', { name: 'Pay now' }).count()).resolves.toBe(0);
    await expect(
      w.http.get('/api/billing', { token: await tokenOf(page) }).then((r) => r.body.subscriptionStatus),
    ).resolves.toBe('active');
    await expectAccessible(page, 'plan & credits');
    await screenshot(page, 'billing');
    await page.close();
  });

  it('pages through the purchases ten at a time, newest first', async () => {
    const page = await w.newPage();
    await signUp(page);
    const token = await tokenOf(page);
    expect(
      (await w.http.post('/api/billing/payment-method', { paymentMethodToken: 'tok_visa' }, { token })).status,
    ).toBe(200);
    // Eleven purchases of 1..11 credits: the newest (11) first, the oldest (1) alone on the second page.
    for (let amount = 1; amount <= 11; amount += 1) {
      expect((await w.http.post('/api/billing/credits/purchase', { amount }, { token })).status).toBe(200);
    }
    await openBilling(page);
    const credits = async () => (await purchaseRows(page)).map((row) => row.credits);
    await expect(credits()).resolves.toEqual(['11', '10', '9', '8', '7', '6', '5', '4', '3', '2']);
    await expect(page.getByRole('button', { name: 'Newer purchases' }).isDisabled()).resolves.toBe(true);
    // The shown page stays until the next one has loaded: wait for its size (a header row and the purchases).
    const rows = page.getByRole('table', { name: 'Purchases' }).getByRole('row');
    await page.getByRole('button', { name: 'Older purchases' }).click();
    await rows.nth(2).waitFor({ state: 'detached' });
    await expect(credits()).resolves.toEqual(['1']);
    await expect(page.getByRole('button', { name: 'Older purchases' }).isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Newer purchases' }).click();
    await rows.nth(10).waitFor();
    await expect(credits()).resolves.toEqual(['11', '10', '9', '8', '7', '6', '5', '4', '3', '2']);
    await page.close();
  });

  it('creates a workspace (not offered below team), invites, changes roles, refuses in place, acts in it', async () => {
    const page = await w.newPage();
    const owner = await signUp(page);
    const teammate = await registerUser(w.http);
    // Below the Team plan, the page says so before the form is filled, and offers no Create.
    await page.goto('/workspaces');
    const create = page.getByRole('region', { name: 'Create a workspace' });
    await create.getByRole('note').filter({ hasText: 'Your Free plan does not include workspaces' }).waitFor();
    await expect(create.getByRole('link', { name: 'see the plans' }).getAttribute('href')).resolves.toBe('/billing');
    await expect(page.getByRole('button', { name: 'Create workspace' }).isDisabled()).resolves.toBe(true);

    await setTierByApi(w, page, 'team');
    await inviteMember(page, 'Research', teammate.email, 'member');
    // Not a member until they accept, on their own Workspaces page.
    expect((await w.http.get('/api/workspaces', { token: teammate.token })).body.items).toEqual([]);
    const mate = await w.newPage();
    await signIn(mate, { email: teammate.email, password: teammate.password });
    await acceptInvitation(mate, 'Research');
    await mate.close();
    await openWorkspace(page, 'Research');
    // The header's switch lists the new workspace.
    await expect(page.getByLabel('Acting in').locator('option').allTextContents()).resolves.toContain(
      'Research (owner)',
    );
    const members = page.getByRole('table', { name: 'Members' });
    const ownerRow = members.getByRole('row').filter({ hasText: owner.email });
    await expect(ownerRow.getByRole('button').count()).resolves.toBe(0);
    const mateRow = members.getByRole('row').filter({ hasText: teammate.email });
    await mateRow.getByLabel(`New role for ${teammate.email}`).selectOption('viewer');
    await mateRow.getByRole('button', { name: `Change role of ${teammate.email}` }).click();
    await mateRow.getByRole('cell', { name: 'viewer', exact: true }).waitFor();
    // An address without an account gets the same answer: a pending invitation, which can be revoked.
    const nobody = `nobody-${Date.now()}@example.com`;
    await inviteMember(page, 'Research', nobody, 'member');
    const pending = page.getByRole('table', { name: 'Pending invitations' });
    await pending.getByRole('button', { name: `Revoke the invitation of ${nobody}` }).click();
    await pending.getByRole('row').filter({ hasText: nobody }).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Act in this workspace' }).click();
    await expect(page.getByLabel('Acting in').inputValue()).resolves.not.toBe('');
    await page.getByText('You are acting in this workspace').waitFor();
    await expectAccessible(page, 'workspace');
    await screenshot(page, 'workspace');

    // The teammate, a viewer, sees the workspace and is refused an invitation where they tried it.
    const other = await w.newPage();
    await signIn(other, { email: teammate.email, password: teammate.password });
    await openWorkspace(other, 'Research');
    await other.getByLabel('Email of the person to invite').fill(owner.email);
    await other.getByRole('button', { name: 'Invite member' }).click();
    await expect(
      other.getByRole('region', { name: 'Invite a member' }).getByRole('alert').textContent(),
    ).resolves.toContain('PERMISSION_DENIED');
    // A viewer is offered nothing on the others' rows.
    await expect(
      other
        .getByRole('table', { name: 'Members' })
        .getByRole('row')
        .filter({ hasText: owner.email })
        .getByRole('button')
        .count(),
    ).resolves.toBe(0);
    await other.close();

    // The owner hands the workspace over and stays as an admin.
    await page.getByLabel('New owner').selectOption({ label: teammate.email });
    await page.getByRole('button', { name: 'Transfer ownership' }).click();
    // Only someone on the Team plan can own a workspace: refused in place until the admin moves them.
    await expect(
      page.getByRole('region', { name: 'Transfer ownership' }).getByRole('alert').textContent(),
    ).resolves.toContain('WORKSPACE_REQUIRED');
    await w.http.patch(`/api/admin/users/${teammate.id}`, { tier: 'team' }, { token: w.admin.token });
    await page.getByRole('button', { name: 'Transfer ownership' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${teammate.email} now owns the workspace` })
      .waitFor();
    await ownerRow.getByRole('cell', { name: 'admin', exact: true }).waitFor();
    await page.close();
  });

  it('lets an admin change a user’s tier and credits; others do not see the Admin page', async () => {
    const page = await w.newPage();
    const user = await signUp(page);
    await page.goto('/admin');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await expect(page.getByRole('link', { name: 'Admin' }).count()).resolves.toBe(0);

    const admin = await w.newPage();
    await signIn(admin, { email: w.admin.email, password: w.admin.password });
    await adminSetsUser(admin, user.email, { tier: 'team', credits: 1234 });
    await expectAccessible(admin, 'admin');
    await screenshot(admin, 'admin');
    const me = await w.http.get('/api/me', { token: await tokenOf(page) });
    expect(me.body).toMatchObject({ tier: 'team', credits: 1234 });
    // The user's own ledger says who set it: the plan, then the credits.
    await openBilling(page);
    const entries = page.getByRole('table', { name: 'Credit ledger' }).getByRole('row');
    await expect(entries.nth(1).getByRole('cell').nth(1).textContent()).resolves.toBe(
      'Plan changed by an administrator (free to team)',
    );
    await expect(entries.nth(2).getByRole('cell').nth(1).textContent()).resolves.toBe('Set by an administrator');

    // The ledger shows 20 entries at a time, older ones on request (23 here: signup, the plan, 21 adjustments).
    const me2 = me.body as { id: string };
    for (let credits = 1; credits <= 20; credits += 1) {
      await w.http.patch(`/api/admin/users/${me2.id}`, { credits }, { token: w.admin.token });
    }
    await openBilling(page);
    const rows = page.getByRole('table', { name: 'Credit ledger' }).getByRole('row');
    await page.getByRole('button', { name: 'Show older entries' }).waitFor();
    await expect(rows.count()).resolves.toBe(21);
    await page.getByRole('button', { name: 'Show older entries' }).click();
    await page.getByRole('cell', { name: 'Credits for signing up' }).waitFor();
    await expect(rows.count()).resolves.toBe(24);
    await expect(page.getByRole('button', { name: 'Show older entries' }).count()).resolves.toBe(0);
    await admin.close();
    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
});

describe('console: plan & credits on a server without payments (PAYMENT_PROVIDER=none)', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld({ env: { PAYMENT_PROVIDER: 'none' } });
  });

  afterAll(async () => {
    await w?.stop();
  });

  it('says payments are off instead of offering forms that can only fail', async () => {
    const page = await w.newPage();
    await signUp(page);
    await openBilling(page);
    const card = page.getByRole('region', { name: 'Payment method' });
    await expect(card.textContent()).resolves.toContain('Payments are off on this server');
    await expect(page.getByLabel(/payment method token/i).count()).resolves.toBe(0);
    await expect(page.getByRole('region', { name: 'Buy credits' }).textContent()).resolves.toContain(
      'Payments are off on this server',
    );
    await expect(page.getByLabel('Credits to buy').count()).resolves.toBe(0);
    await expect(page.getByRole('region', { name: 'Purchases' }).count()).resolves.toBe(0);
    expect(await shownBalance(page)).toBe(100);
    await expectAccessible(page, 'plan & credits (payments off)');
    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
  describe.each(WIDTHS)('the admin page at %i px wide', (width) => {
    it('shows the subscription’s plan beside the tier, a tier an administrator set over it and what it held back, and returns the user to the subscription’s plan', async () => {
      const user = await registerUser(w.http);
      // A subscription as Stripe's events leave it (the suites' payments here are the test provider's).
      await sql(
        `INSERT INTO billing_customers (user_id, customer_id, subscription_id, subscription_tier, subscription_status, updated_at)
         VALUES ($1, $2, $3, 'harness', 'past_due', now())`,
        [user.id, `cus_browser_${width}_${user.id.slice(0, 8)}`, `sub_browser_${width}_${user.id.slice(0, 8)}`],
      );
      await w.http.patch(`/api/admin/users/${user.id}`, { tier: 'team' }, { token: w.admin.token });
      await sql(
        `UPDATE tier_overrides SET overridden_at = now(), overridden_tier = 'harness', overridden_status = 'past_due'
          WHERE user_id = $1`,
        [user.id],
      );
      const admin = await w.newPage({ width });
      await signIn(admin, { email: w.admin.email, password: w.admin.password });
      const row = await adminRow(admin, user.email);
      await row.getByText('Subscription: harness, past due').waitFor();
      await row.getByText('Set by an administrator: team holds over the subscription').waitFor();
      await row.getByText(/^Held back on .+: harness, past due$/).waitFor();
      await expectAccessible(admin, `admin-override-${width}`);
      await screenshot(admin, `admin-override-${width}`);

      await row.getByRole('button', { name: `Use the subscription’s plan for ${user.email}` }).click();
      await row.getByText('Set by an administrator').waitFor({ state: 'detached' });
      await expect(admin.getByLabel(`Tier of ${user.email}`).inputValue()).resolves.toBe('harness');
      await row.getByText('Subscription: harness, past due').waitFor();
      const me = await w.http.get('/api/me', { token: user.token });
      expect(me.body).toMatchObject({ tier: 'harness', subscriptionStatus: 'past_due' });
      await admin.close();
      expect(w.pageErrors).toEqual([]);
    });
  });
});
