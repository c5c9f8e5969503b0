/**
 * The console's steps for MCP servers, driven through accessible names: add one by its endpoint
 * (the kind found out, or chosen), store a pasted token, open a tool's try-out form.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { createTestCa, issueServerCert, type ServerCert, type TestCa } from '../../../examples/site/tls.js';
import { testEnv } from '../../setup/shared-runtime.js';

/** A CA of its own for the suite's MCP peers: its file (SITE_CA_CERTS) and a certificate for localhost. */
export async function peerCertificates(): Promise<{ ca: TestCa; caFile: string; cert: ServerCert }> {
  const ca = await createTestCa('agentsite MCP peers test CA');
  const caFile = path.join(testEnv('workDir'), `mcp-ca-${Date.now()}-${Math.random().toString(36).slice(2)}.pem`);
  writeFileSync(caFile, ca.cert);
  return { ca, caFile, cert: await issueServerCert(ca) };
}

/**
 * Adds an MCP server by its endpoint on the vault page: the kind found out by the service, or chosen
 * under "Kind of site". Ends on the new site's page and returns its id.
 */
export async function addMcpServer(page: Page, url: string, options: { choose?: boolean } = {}): Promise<string> {
  await page.goto('/vault');
  await page.getByLabel('Site address').fill(url);
  if (options.choose === true) {
    await page.getByText('Kind of site: find out').click();
    await page.getByRole('radio', { name: 'An MCP server' }).check();
  }
  await page.getByRole('button', { name: 'Add site' }).click();
  await page.waitForURL(/\/vault\/[0-9a-f-]{36}$/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Stores a pasted token in the site page's connection card; waits until the card says so. */
export async function storeToken(page: Page, token: string): Promise<void> {
  const card = page.getByRole('region', { name: 'Connection' });
  await card.getByLabel('Token', { exact: true }).fill(token);
  await card.getByRole('button', { name: 'Store token' }).click();
  await card.getByText('Connected with a token', { exact: true }).waitFor();
}

/** Opens a tool's try-out form on the site page and returns its panel. */
export async function openTool(page: Page, tool: string): Promise<Locator> {
  await page.getByRole('button', { name: `Try ${tool}`, exact: true }).click();
  const panel = page.getByRole('region', { name: `Try ${tool}` });
  await panel.waitFor();
  return panel;
}

/** The words of a tool's row in the tools table (title, name, description, hints, scope). */
export async function toolRowText(page: Page, tool: string): Promise<string> {
  const row = page.getByRole('row').filter({ has: page.getByRole('button', { name: `Try ${tool}`, exact: true }) });
  return ((await row.textContent()) ?? '').replace(/\s+/g, ' ');
}

/**
 * On an MCP server's page: Connect (the button names the server, and the scope when it asks for
 * more), sign in and approve on oidc-provider's own pages (its development login: any login and
 * password), and back on the console's completion page. Returns the scopes the page says were granted.
 */
export async function connectMcpByOAuth(page: Page, button: RegExp, login: string): Promise<string[]> {
  await page.getByRole('region', { name: 'Connection' }).getByRole('button', { name: button }).click();
  await page.waitForURL((url) => url.pathname.startsWith('/interaction/'));
  if ((await page.locator('input[name="login"]').count()) > 0) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
  }
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.pathname === '/oauth/complete');
  await page.getByRole('heading', { level: 1, name: / is connected$/ }).waitFor();
  const granted = await page
    .getByRole('status')
    .filter({ hasText: 'granted the scopes' })
    .locator('strong')
    .textContent();
  return (granted ?? '').split(', ').filter(Boolean);
}
