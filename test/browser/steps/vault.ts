/**
 * The vault's steps in the console, driven through accessible names: add a site, connect it by OAuth
 * through the site's own consent page, try a tool. The end-to-end scenario chains them.
 */
import type { Page } from 'playwright-core';
import type { ReferenceSite } from '../../../examples/site/site.js';
import type { Stack } from '../../utils/stack.js';

/** The reference site accepts the service's callback as the redirect of its `agentsite` client. */
export function allowServiceCallback(site: ReferenceSite, stack: Stack): void {
  site.allowRedirect('agentsite', `${stack.baseUrl}/api/oauth/callback`);
}

/** Adds a site by its address on the vault page; ends on the new site's page and returns its id. */
export async function addSite(page: Page, url: string): Promise<string> {
  await page.goto('/vault');
  await page.getByLabel('Site address').fill(url);
  await page.getByRole('button', { name: 'Add site' }).click();
  await page.waitForURL(/\/vault\/[0-9a-f-]{36}$/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Opens a site's page from the vault list. */
export async function openSite(page: Page, siteName: string): Promise<void> {
  if (new URL(page.url()).pathname !== '/vault') {
    await page.goto('/vault');
  }
  await page.getByRole('link', { name: siteName, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: siteName }).waitFor();
}

export interface SiteAccount {
  username: string;
  password: string;
}

/**
 * Connects a site of the vault by OAuth: on its page, chooses the tools (all of them when not given),
 * approves on the site's consent page as `account`, and returns on the console's completion page,
 * which has completed the connection. Returns the scopes the page says were granted.
 */
export async function connectSiteByOAuth(
  page: Page,
  siteName: string,
  tools?: string[],
  account: SiteAccount = { username: 'alice', password: 'alice-password' },
): Promise<string[]> {
  await openSite(page, siteName);
  const form = page.getByRole('group', { name: 'Tools this connection is for' });
  for (const box of await form.getByRole('checkbox').all()) {
    const name = (await box.getAttribute('id'))!.replace(/^connect-tool-/, '');
    await box.setChecked(tools === undefined || tools.includes(name));
  }
  await page.getByRole('button', { name: new RegExp(`^Connect ${siteName}`) }).click();
  // The site's own page: the reference site asks for its user and password, then Approve.
  await page.waitForURL((url) => url.pathname === '/oauth/authorize');
  await page.getByLabel('User').fill(account.username);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL((url) => url.pathname === '/oauth/complete');
  await page.getByRole('heading', { level: 1, name: `${siteName} is connected` }).waitFor();
  const granted = await page
    .getByRole('status')
    .filter({ hasText: 'granted the scopes' })
    .locator('strong')
    .textContent();
  return (granted ?? '').split(', ').filter(Boolean);
}

export type ToolOutcome = { ok: true; result: unknown; text: string } | { ok: false; code: string; text: string };

/**
 * On a site's page: opens the try-out form of `tool`, fills its fields by their labels (the
 * property names), calls it, and returns the result (parsed JSON) or the error shown.
 */
export async function tryTool(page: Page, tool: string, fields: Record<string, string> = {}): Promise<ToolOutcome> {
  await page.getByRole('button', { name: `Try ${tool}`, exact: true }).click();
  const panel = page.getByRole('region', { name: `Try ${tool}` });
  for (const [name, value] of Object.entries(fields)) {
    await panel.getByLabel(new RegExp(`^${name}( \\(required\\))?$`)).fill(value);
  }
  await panel.getByRole('button', { name: `Call ${tool}` }).click();
  const result = panel.getByLabel(`Result of ${tool}`);
  const error = panel.getByRole('alert');
  await result.or(error).first().waitFor();
  if (await result.isVisible()) {
    const text = (await result.textContent()) ?? '';
    return { ok: true, result: JSON.parse(text) as unknown, text };
  }
  return {
    ok: false,
    code: (await error.getAttribute('data-code')) ?? '',
    text: (await error.textContent()) ?? '',
  };
}
