/**
 * The Approvals area's steps: an agent's approval policy and notifications in its form, the
 * navigation's count of waiting approvals, the inbox, and a run that waits for a decision.
 */
import type { Locator, Page } from 'playwright-core';
import { openNavigation } from './navigation.js';

export interface PolicyChoices {
  /** The policy's checkboxes, as the form words them ("Calls that change data (create, update)"). */
  scopes: RegExp[];
  hours?: number;
  minutes?: number;
  notifyUrl?: string;
  /** The events' checkboxes to set (others are cleared), as the form words them. */
  events?: string[];
}

/** Fills the agent form's Approvals and Notifications sections (the form is open). */
export async function fillPolicy(page: Page, choices: PolicyChoices): Promise<void> {
  const approvals = page.getByRole('group', { name: 'Approvals' });
  for (const scope of choices.scopes) {
    await approvals.getByRole('checkbox', { name: scope }).check();
  }
  if (choices.hours !== undefined) {
    await approvals.getByLabel('Wait for a decision: hours').fill(String(choices.hours));
  }
  if (choices.minutes !== undefined) {
    await approvals.getByLabel('and minutes').fill(String(choices.minutes));
  }
  if (choices.notifyUrl !== undefined) {
    const notifications = page.getByRole('group', { name: 'Notifications' });
    await notifications.getByLabel('Notification address').fill(choices.notifyUrl);
    const events = notifications.getByRole('list', { name: 'Tell it when' }).getByRole('checkbox');
    for (const box of await events.all()) {
      const name = (await box.evaluate(
        (el) => (el as unknown as { labels: Array<{ textContent: string }> }).labels[0]?.textContent,
      )) as string;
      await box.setChecked(choices.events?.includes(name) ?? false);
    }
  }
}

/**
 * Waits until the navigation's count reads `count` approvals waiting (0: no count shown; `more`: more
 * than `count`, the badge's "20+"); returns the link's name.
 */
export async function waitForWaitingCount(page: Page, count: number, more = false): Promise<string> {
  await openNavigation(page);
  const name =
    count === 0
      ? 'Approvals'
      : more
        ? `Approvals (more than ${count} approvals waiting)`
        : `Approvals (${count} approval${count === 1 ? '' : 's'} waiting)`;
  // The count is read again on every change of page, after a decision, and every 30 s.
  await page.getByRole('banner').getByRole('link', { name, exact: true }).waitFor({ timeout: 40_000 });
  return name;
}

/** One waiting call in the inbox, found by its heading ("create_note on Reference Notebook"). */
export function inboxItem(page: Page, tool: string, site: string): Locator {
  return page.getByRole('article', { name: `${tool} on ${site}` });
}

/** The input rows of a call as shown: {field: value}. */
export async function shownInput(item: Locator): Promise<Record<string, string>> {
  const list = item.locator('dl.call-input');
  const keys = await list.locator('dt').allTextContents();
  const values = await list.locator('dd').allTextContents();
  return Object.fromEntries(keys.map((k, i) => [k, values[i] ?? '']));
}

/** Approves or denies a waiting call with a note, from the inbox or the run page. */
export async function decide(where: Locator, what: string, decision: 'Approve' | 'Deny', note?: string): Promise<void> {
  const form = where.getByRole('form', { name: `Decide on ${what}` });
  if (note !== undefined) {
    await form.getByLabel('Note (optional)').fill(note);
  }
  await form.getByRole('button', { name: `${decision} ${what}` }).click();
}

/** Opens `path` acting in the workspace (chosen in the header's "Acting in", at any width). */
export async function openInWorkspace(page: Page, workspaceId: string, path: string): Promise<void> {
  await page.goto(path);
  await page.getByRole('heading', { level: 1 }).waitFor();
  await openNavigation(page);
  await page.getByLabel('Acting in').selectOption(workspaceId);
  await page.goto(path);
  await page.getByRole('heading', { level: 1 }).waitFor();
}
