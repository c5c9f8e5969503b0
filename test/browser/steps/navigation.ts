/**
 * The console's header at any width: on a wide screen the navigation is always shown; below the
 * menu breakpoint it folds behind the Menu button. These steps work either way.
 */
import { expect } from '@jest/globals';
import type { Page } from 'playwright-core';

/** The main navigation's links, in order (Admin only for an admin). */
export const NAV_LINKS = ['Vault', 'Chat', 'Agents', 'Approvals', 'Plan & credits', 'Workspaces', 'Check a site'];

function menuButton(page: Page) {
  return page.getByRole('button', { name: 'Menu', exact: true });
}

/** Whether the header folds its navigation behind the Menu button at this page's width. */
export async function navigationFolded(page: Page): Promise<boolean> {
  return menuButton(page).isVisible();
}

/** Shows the navigation (opening the menu when it is folded); a no-op on a wide screen. */
export async function openNavigation(page: Page): Promise<void> {
  const button = menuButton(page);
  if (!(await button.isVisible())) {
    return;
  }
  if ((await button.getAttribute('aria-expanded')) !== 'true') {
    await button.click();
  }
  await expect(button.getAttribute('aria-expanded')).resolves.toBe('true');
  const menu = page.locator(`[id="${await button.getAttribute('aria-controls')}"]`);
  await menu.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** Follows a link of the main navigation (or the account link: the user's email), wherever the header shows it. */
export async function navigateTo(page: Page, name: string): Promise<void> {
  await openNavigation(page);
  await page.getByRole('banner').getByRole('link', { name, exact: true }).click();
}

/** Signs out with the navigation's Sign out; ends on the sign-in page. */
export async function signOutFromNavigation(page: Page): Promise<void> {
  await openNavigation(page);
  await page.getByRole('banner').getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/signin');
}
