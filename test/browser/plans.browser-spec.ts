/**
 * Issue 36, items 10 and 8 (part): what a plan leaves out is said before a form is filled, a change
 * of plan is confirmed with its price and what becomes of the balance, an error goes once its cause
 * is fixed, and a member row offers only what the viewer may do. At a laptop's and a phone's width.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { registerUser } from '../utils/users.js';
import {
  expectAccessible,
  screenshot,
  signIn,
  signUp,
  startConsoleWorld,
  tokenOf,
  WIDTHS,
  type ConsoleWorld,
} from './harness.js';
import {
  addPaymentMethod,
  changePlan,
  inviteMember,
  openBilling,
  openWorkspace,
  reviewPlanChange,
  setTierByApi,
  shownBalance,
} from './steps/billing.js';

describe.each(WIDTHS)('console at %i px: plans and what they allow', (width) => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  const tierNow = async (page: Page) =>
    (await w.http.get<{ tier: string }>('/api/billing', { token: await tokenOf(page) })).body.tier;

  it('says beside each trigger the tier it needs, with the plan link, below it; nothing at harness', async () => {
    const page = await w.newPage({ width });
    await signUp(page);
    await page.goto('/agents/new');
    const trigger = page.getByRole('group', { name: 'Trigger' });
    await trigger.getByText('Needs the Harness plan ($50.00 a month) or higher; you are on Free.').waitFor();
    await trigger.getByText('Needs the Pro plan ($20.00 a month) or higher; you are on Free.').waitFor();
    await expect(page.getByRole('radio', { name: 'Webhook' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('radio', { name: 'Schedule (cron)' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('radio', { name: 'Manual' }).isChecked()).resolves.toBe(true);
    const links = trigger.getByRole('link', { name: 'See the plans' });
    await expect(links.count()).resolves.toBe(2);
    await expect(links.first().getAttribute('href')).resolves.toBe('/billing');
    // The hint is the radio's description: a screen reader hears it with the choice.
    await expect(
      page.getByRole('radio', { name: 'Webhook' }).evaluate((el) => {
        const ids = el.getAttribute('aria-describedby') ?? '';
        return el.ownerDocument.getElementById(ids)?.textContent ?? '';
      }),
    ).resolves.toContain('Needs the Harness plan');
    await expectAccessible(page, `new agent, free tier (${width} px)`);
    await screenshot(page, `agent-trigger-gated-${width}`);

    await setTierByApi(w, page, 'harness');
    // Once the plan has loaded, the page has said all it will say about it.
    const planRead = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/billing' && r.ok());
    await page.goto('/agents/new');
    await planRead;
    await page.getByRole('heading', { name: 'New agent' }).waitFor();
    await page.getByRole('radio', { name: 'Webhook' }).check();
    await page.getByLabel('Payload schema (JSON)').waitFor();
    await expect(trigger.getByText(/Needs the/).count()).resolves.toBe(0);
    await expect(trigger.getByRole('link', { name: 'See the plans' }).count()).resolves.toBe(0);
    await expect(page.getByRole('radio', { name: 'Schedule (cron)' }).isDisabled()).resolves.toBe(false);
    await expectAccessible(page, `new agent, harness tier (${width} px)`);
    await page.close();
  });

  it('confirms a plan change with its price, when it is charged and the balance; cancel changes nothing; a downgrade lists the losses', async () => {
    const page = await w.newPage({ width });
    await signUp(page);
    await openBilling(page);
    // Without a card: the confirmation says what is missing and cannot be confirmed.
    await reviewPlanChange(page, 'harness');
    await page.getByText('Add a payment method above first: the plan is charged to it.').waitFor();
    await expect(page.getByRole('button', { name: 'Confirm the change to Harness' }).isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();

    await addPaymentMethod(page, 'tok_visa');
    const asked = await reviewPlanChange(page, 'harness');
    expect(asked.heading).toBe('Change from Free to Harness?');
    expect(asked.charge).toContain('The Harness plan costs $50.00 a month');
    expect(asked.charge).toContain('$50.00 is charged now to your visa card ending in 4242');
    expect(asked.balance).toContain('Your balance of 100 credits ($1.00) stays as it is');
    expect(asked.balance).toContain('changing plans neither adds nor removes any');
    expect(asked.losses).toEqual([]);
    await expectAccessible(page, `plan change confirmation (${width} px)`);
    await screenshot(page, `plan-change-confirm-${width}`);

    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('group', { name: /^Change from / }).count()).resolves.toBe(0);
    await expect(page.getByTestId('tier').textContent()).resolves.toBe('free');
    await expect(tierNow(page)).resolves.toBe('free');
    // Nothing was charged: the balance, and the ledger's single signup row, are as they were.
    const ledger = await w.http.get<{ items: unknown[] }>('/api/billing/ledger', { token: await tokenOf(page) });
    expect(ledger.body.items).toHaveLength(1);

    await changePlan(page, 'harness');
    await expect(tierNow(page)).resolves.toBe('harness');
    expect(await shownBalance(page)).toBe(100);

    const down = await reviewPlanChange(page, 'pro');
    expect(down.heading).toBe('Change from Harness to Pro?');
    expect(down.losses).toEqual(['Sites in your vault: 25 → 10', 'Agents: 50 → 10', 'Webhook agents']);
    await page.getByText('scheduled and webhook agents the plan no longer includes stop running').waitFor();
    await expectAccessible(page, `plan downgrade confirmation (${width} px)`);
    await page.getByRole('button', { name: 'Confirm the change to Pro' }).click();
    await page.getByRole('status').filter({ hasText: 'You are now on pro.' }).waitFor();
    await expect(tierNow(page)).resolves.toBe('pro');
    expect(await shownBalance(page)).toBe(100);
    await page.close();
  });

  it('clears a payment error once a card that works is stored', async () => {
    const page = await w.newPage({ width });
    await signUp(page);
    await openBilling(page);
    const buy = page.getByRole('region', { name: 'Buy credits' });
    const plan = page.getByRole('region', { name: 'Subscription' });
    await addPaymentMethod(page, 'tok_chargeDeclined');
    await page.getByLabel('Credits to buy').fill('300');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await buy.getByRole('alert').waitFor();
    await reviewPlanChange(page, 'pro');
    await page.getByRole('button', { name: 'Confirm the change to Pro' }).click();
    await plan.getByRole('alert').waitFor();
    await expectAccessible(page, `payment errors (${width} px)`);

    await addPaymentMethod(page, 'tok_visa');
    await page.getByTestId('payment-method').getByText('ending in 4242').waitFor();
    await expect(buy.getByRole('alert').count()).resolves.toBe(0);
    await expect(plan.getByRole('alert').count()).resolves.toBe(0);
    await expectAccessible(page, `payment errors cleared (${width} px)`);
    // And the card works: the change the old card could not pay goes through.
    await page.getByRole('button', { name: 'Confirm the change to Pro' }).click();
    await page.getByRole('status').filter({ hasText: 'You are now on pro.' }).waitFor();
    await page.close();
  });

  it('offers on each member row only what the viewer may do; the owner’s own row points to Transfer ownership', async () => {
    const page = await w.newPage({ width });
    const owner = await signUp(page);
    await page.goto('/workspaces');
    await page.getByText('Your Free plan does not include workspaces').waitFor();
    await expect(page.getByRole('button', { name: 'Create workspace' }).isDisabled()).resolves.toBe(true);
    await expectAccessible(page, `workspaces, free tier (${width} px)`);

    await setTierByApi(w, page, 'team');
    const mate = await registerUser(w.http);
    await inviteMember(page, 'Crew', mate.email, 'admin');
    const invitations = await w.http.get<{ items: Array<{ id: string }> }>('/api/invitations', { token: mate.token });
    const accepted = await w.http.post(
      `/api/invitations/${invitations.body.items[0]!.id}/accept`,
      {},
      {
        token: mate.token,
      },
    );
    expect(accepted.status).toBe(200);

    await openWorkspace(page, 'Crew');
    const members = page.getByRole('table', { name: 'Members' });
    const ownerRow = members.getByRole('row').filter({ hasText: owner.email });
    const mateRow = members.getByRole('row').filter({ hasText: mate.email });
    await mateRow.waitFor();
    await expect(ownerRow.getByRole('button').count()).resolves.toBe(0);
    await expect(ownerRow.getByRole('combobox').count()).resolves.toBe(0);
    await expect(ownerRow.getByTestId('owner-note').textContent()).resolves.toBe(
      'You own this workspace: to change your role or leave it, first hand it to another member under Transfer ownership.',
    );
    await expect(ownerRow.getByRole('link', { name: 'Transfer ownership' }).getAttribute('href')).resolves.toBe(
      '#transfer-heading',
    );
    await mateRow.getByRole('button', { name: `Change role of ${mate.email}` }).waitFor();
    await mateRow.getByRole('button', { name: `Remove ${mate.email}` }).waitFor();
    await expectAccessible(page, `members, as the owner (${width} px)`);
    await screenshot(page, `members-owner-${width}`);

    // The admin: nothing on the owner's row, everything on their own (leaving included).
    const other = await w.newPage({ width });
    await signIn(other, { email: mate.email, password: mate.password });
    await openWorkspace(other, 'Crew');
    const theirMembers = other.getByRole('table', { name: 'Members' });
    const ownerSeen = theirMembers.getByRole('row').filter({ hasText: owner.email });
    await expect(ownerSeen.getByTestId('owner-note').textContent()).resolves.toBe(
      'The owner: their role changes only when they transfer the ownership.',
    );
    await expect(ownerSeen.getByRole('button').count()).resolves.toBe(0);
    const ownRow = theirMembers.getByRole('row').filter({ hasText: mate.email });
    await ownRow.getByRole('button', { name: `Change role of ${mate.email}` }).waitFor();
    await ownRow.getByRole('button', { name: 'Leave the workspace' }).waitFor();
    await expectAccessible(other, `members, as an admin (${width} px)`);

    // Made a viewer: no management at all, only leaving.
    await mateRow.getByLabel(`New role for ${mate.email}`).selectOption('viewer');
    await mateRow.getByRole('button', { name: `Change role of ${mate.email}` }).click();
    await mateRow.getByRole('cell', { name: 'viewer', exact: true }).waitFor();
    await other.reload();
    await ownRow.getByRole('button', { name: 'Leave the workspace' }).waitFor();
    await expect(theirMembers.getByRole('button', { name: /^Change role/ }).count()).resolves.toBe(0);
    await expect(theirMembers.getByRole('button').count()).resolves.toBe(1);
    await expectAccessible(other, `members, as a viewer (${width} px)`);
    await other.close();
    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
});
