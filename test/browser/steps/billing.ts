/**
 * Steps of the Plan & credits, Workspaces and Admin pages, driven through their accessible names,
 * for the browser specs (billing.browser-spec.ts and the end-to-end scenario).
 */
import { expect } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import type { World } from '../../utils/world.js';
import { tokenOf } from '../harness.js';

/** "1,234 credits ($12.34)" → 1234. */
function creditsIn(text: string | null): number {
  const match = /([\d,]+) credits/.exec(text ?? '');
  if (match === null) {
    throw new Error(`no credit amount in ${JSON.stringify(text)}`);
  }
  return Number(match[1]!.replace(/,/g, ''));
}

/** Opens Plan & credits and waits for the plan to load. */
export async function openBilling(page: Page): Promise<void> {
  await page.goto('/billing');
  await page.getByRole('heading', { name: 'Plan & credits' }).waitFor();
  await page.getByRole('heading', { name: 'Payment method' }).waitFor();
}

/** The balance the Plan & credits page shows. */
export async function shownBalance(page: Page): Promise<number> {
  return creditsIn(await page.getByTestId('balance').textContent());
}

/** Stores (or replaces) the payment method with a provider token; waits until the page shows the card. */
export async function addPaymentMethod(page: Page, token = 'tok_visa'): Promise<void> {
  const button = page.getByRole('button', { name: /(Add|Replace) payment method/ });
  await page.getByLabel(/payment method token/i).fill(token);
  await button.click();
  await page.getByRole('status').filter({ hasText: 'Payment method stored.' }).waitFor();
}

/**
 * Buys `amount` credits on Plan & credits (adding the test provider's `tok_visa` first when there is
 * no payment method); asserts the new balance and the purchase at the top of the ledger.
 */
export async function buyCredits(page: Page, amount: number): Promise<number> {
  await openBilling(page);
  if ((await page.getByTestId('payment-method').textContent())?.includes('No payment method') === true) {
    await addPaymentMethod(page);
  }
  const before = await shownBalance(page);
  await page.getByLabel('Credits to buy').fill(String(amount));
  await page.getByRole('button', { name: 'Buy credits' }).click();
  const note = page.getByRole('status').filter({ hasText: 'Bought.' });
  await note.waitFor();
  expect(creditsIn(await note.textContent())).toBe(before + amount);
  expect(await shownBalance(page)).toBe(before + amount);
  const cells = page.getByRole('table', { name: 'Credit ledger' }).getByRole('row').nth(1).getByRole('cell');
  await expect(cells.allTextContents()).resolves.toEqual([
    expect.any(String),
    'Purchase',
    `+${amount.toLocaleString('en-US')}`,
    (before + amount).toLocaleString('en-US'),
  ]);
  return before + amount;
}

/** The rows of the Purchases table, newest first (its first page), once it has loaded. */
export async function purchaseRows(page: Page): Promise<Array<{ credits: string; amount: string; status: string }>> {
  const table = page.getByRole('table', { name: 'Purchases' });
  await table.waitFor();
  const rows = table.getByRole('row');
  const shown: Array<{ credits: string; amount: string; status: string }> = [];
  for (let i = 1; i < (await rows.count()); i += 1) {
    const cells = await rows.nth(i).getByRole('cell').allTextContents();
    shown.push({ credits: cells[1]!, amount: cells[2]!, status: cells[3]! });
  }
  return shown;
}

/** Sets the signed-in user's tier through the API, as the world's admin (the console's own admin page is adminSetsUser). */
export async function setTierByApi(w: Pick<World, 'http' | 'admin'>, page: Page, tier: string): Promise<void> {
  const me = await w.http.get('/api/me', { token: await tokenOf(page) });
  const changed = await w.http.patch(`/api/admin/users/${me.body.id}`, { tier }, { token: w.admin.token });
  expect(changed.status).toBe(200);
}

/** Opens the workspace with this name, creating it first when the user has none by that name. */
export async function openWorkspace(page: Page, workspaceName: string): Promise<void> {
  await page.goto('/workspaces');
  await page.getByRole('heading', { name: 'Create a workspace' }).waitFor();
  await page.getByRole('button', { name: 'Create workspace' }).waitFor();
  const link = page.getByRole('link', { name: workspaceName, exact: true });
  // The list loads after the page: wait for it (a table or the "not a member" line).
  await page.getByRole('table', { name: 'Your workspaces' }).or(page.getByText('not a member of any')).waitFor();
  if ((await link.count()) === 0) {
    await page.getByLabel('Workspace name').fill(workspaceName);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('status').filter({ hasText: 'you are its owner' }).waitFor();
  }
  await link.first().click();
  await page.getByRole('heading', { name: `Workspace ${workspaceName}` }).waitFor();
}

/**
 * Invites `email` to the workspace with this name (created first if needed: the user must be on tier
 * team, see setTierByApi) with `role`; asserts the pending invitation's row (nobody joins until the
 * invited user accepts, see acceptInvitation).
 */
export async function inviteMember(page: Page, workspaceName: string, email: string, role: string): Promise<void> {
  await openWorkspace(page, workspaceName);
  await page.getByLabel('Email of the person to invite').fill(email);
  await page.getByLabel('Role for the new member').selectOption(role);
  await page.getByRole('button', { name: 'Invite member' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `Invited ${email} as ${role}` })
    .waitFor();
  const row = page.getByRole('table', { name: 'Pending invitations' }).getByRole('row').filter({ hasText: email });
  await row.waitFor();
  await expect(row.getByRole('cell').nth(1).textContent()).resolves.toBe(role);
}

/** As the invited user, signed in on `page`: accepts the invitation to `workspaceName` on the Workspaces page. */
export async function acceptInvitation(page: Page, workspaceName: string): Promise<void> {
  await page.goto('/workspaces');
  await page.getByRole('button', { name: `Accept the invitation to ${workspaceName}` }).click();
  await page.getByRole('link', { name: workspaceName, exact: true }).waitFor();
}

/**
 * As a signed-in admin, on the Admin page: changes a user's tier and/or credits and saves, waiting
 * for the row to say so.
 */
/** The admin page's row of a user (pages of users are loaded until it shows). */
export async function adminRow(page: Page, email: string): Promise<Locator> {
  await page.goto('/admin');
  await page.getByRole('table', { name: 'Users' }).waitFor();
  const row = page.getByRole('row').filter({ hasText: email });
  while ((await row.count()) === 0) {
    const more = page.getByRole('button', { name: 'Show more users' });
    if ((await more.count()) === 0) {
      throw new Error(`no user ${email} on the admin page`);
    }
    await more.click();
    await page.getByRole('button', { name: 'Show more users' }).or(row).first().waitFor();
  }
  return row;
}

export async function adminSetsUser(
  page: Page,
  email: string,
  changes: { tier?: string; credits?: number; role?: string; subscriptionStatus?: string },
): Promise<void> {
  const row = await adminRow(page, email);
  if (changes.tier !== undefined) {
    await page.getByLabel(`Tier of ${email}`).selectOption(changes.tier);
  }
  if (changes.credits !== undefined) {
    await page.getByLabel(`Credits of ${email}`).fill(String(changes.credits));
  }
  if (changes.role !== undefined) {
    await page.getByLabel(`Role of ${email}`).selectOption(changes.role);
  }
  if (changes.subscriptionStatus !== undefined) {
    await page.getByLabel(`Subscription status of ${email}`).selectOption(changes.subscriptionStatus);
  }
  await row.getByRole('button', { name: `Save ${email}` }).click();
  await row.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
}

/** The confirmation a plan change asks for, as shown: its heading, price, balance and losses texts. */
export interface PlanConfirmation {
  heading: string;
  charge: string;
  balance: string;
  /** Empty unless the change goes down. */
  losses: string[];
}

/** Chooses a tier and asks to change to it; returns the confirmation shown (nothing is charged yet). */
export async function reviewPlanChange(page: Page, tier: string): Promise<PlanConfirmation> {
  await page.getByLabel('Tier').selectOption(tier);
  await page.getByRole('button', { name: 'Change subscription' }).click();
  const confirm = page.getByRole('group', { name: /^Change from / });
  await confirm.waitFor();
  const losses = confirm.getByTestId('plan-losses').getByRole('listitem');
  return {
    heading: (await confirm.getByRole('heading').textContent()) ?? '',
    charge: (await confirm.getByTestId('plan-charge').textContent()) ?? '',
    balance: (await confirm.getByTestId('plan-balance').textContent()) ?? '',
    losses: await losses.allTextContents(),
  };
}

/** Changes the plan on Plan & credits, confirming it; waits for the page to say so. */
export async function changePlan(page: Page, tier: string): Promise<PlanConfirmation> {
  const shown = await reviewPlanChange(page, tier);
  await page.getByRole('button', { name: /^Confirm the change to / }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `You are now on ${tier}.` })
    .waitFor();
  await expect(page.getByTestId('tier').textContent()).resolves.toBe(tier);
  return shown;
}
