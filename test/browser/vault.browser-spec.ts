import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { approveAtSite } from '../utils/site.js';
import {
  expectAccessible,
  screenshot,
  signIn,
  signUp,
  startConsoleWorld,
  tokenOf,
  type ConsoleWorld,
} from './harness.js';
import { addSite, allowServiceCallback, connectSiteByOAuth, openSite, tryTool } from './steps/vault.js';

const SITE_NAME = 'Reference Notebook';

describe('console: the vault, OAuth connections and tool try-outs', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
    allowServiceCallback(w.site, w.stack);
  });

  afterAll(async () => {
    await w?.stop();
  });

  async function alertOf(page: Page): Promise<{ code: string | null; text: string }> {
    const alert = page.getByRole('alert').first();
    await alert.waitFor();
    return { code: await alert.getAttribute('data-code'), text: (await alert.textContent()) ?? '' };
  }

  it('adds a site by address, showing each refusal where it happened (manifest errors field by field)', async () => {
    const page = await w.newPage();
    await signUp(page);
    await page.getByRole('heading', { name: 'Vault' }).waitFor();
    await expectAccessible(page, 'vault (empty)');
    const address = page.getByLabel('Site address');
    const add = page.getByRole('button', { name: 'Add site' });

    await address.fill(w.site.url.replace('https:', 'http:'));
    await add.click();
    expect(await alertOf(page)).toMatchObject({ code: 'INVALID_URL' });
    await expect(address.getAttribute('aria-invalid')).resolves.toBe('true');

    w.site.manifestOverride = { status: 404 };
    await address.fill(w.site.url);
    await add.click();
    expect(await alertOf(page)).toMatchObject({ code: 'MANIFEST_NOT_FOUND' });

    const broken = w.site.manifest() as { tools: Array<Record<string, unknown>> };
    w.site.manifestOverride = {
      json: { ...broken, version: undefined, tools: [{ ...broken.tools[0], description: undefined }] },
    };
    await add.click();
    const invalid = await alertOf(page);
    expect(invalid.code).toBe('MANIFEST_INVALID');
    const fields = await page.getByRole('alert').locator('li code').allTextContents();
    expect(fields).toEqual(expect.arrayContaining(['version', 'tools[0].description']));
    await screenshot(page, 'vault-manifest-invalid');

    w.site.manifestOverride = undefined;
    const siteId = await addSite(page, w.site.url);
    await page.getByRole('heading', { level: 1, name: SITE_NAME }).waitFor();
    await page.getByText('Not connected').first().waitFor();
    await expectAccessible(page, 'site page');

    // The list shows it with its state; it can be refreshed, and removed after a confirmation.
    await page.getByRole('link', { name: '← Vault' }).click();
    const row = page.getByRole('row', { name: new RegExp(SITE_NAME) });
    await row.getByText('Not connected').waitFor();
    // The buttons' names start with their visible words (WCAG 2.5.3, label in name).
    await row.getByRole('button', { name: `Refresh manifest of ${SITE_NAME}`, exact: true }).click();
    await row.locator('button:enabled', { hasText: 'Refresh manifest' }).waitFor();
    await row.getByRole('button', { name: `Remove ${SITE_NAME}`, exact: true }).click();
    await row.getByRole('button', { name: `Yes, remove ${SITE_NAME}` }).click();
    await page.getByText('No site yet').waitFor();
    const gone = await w.http.get(`/api/vault/sites/${siteId}`, { token: await tokenOf(page) });
    expect(gone.status).toBe(404);
    await page.close();
  });

  it('connects by OAuth through the site’s consent page, asking only for the chosen tools’ scopes, and tries tools', async () => {
    const page = await w.newPage();
    await signUp(page);
    const siteId = await addSite(page, w.site.url);
    await page.getByRole('checkbox', { name: /delete_note/ }).uncheck();
    await page.getByRole('checkbox', { name: /manage_users/ }).uncheck();
    await expect(page.getByRole('status').filter({ hasText: 'Scopes asked for' }).textContent()).resolves.toContain(
      'read, write',
    );
    await screenshot(page, 'vault-site');
    const granted = await connectSiteByOAuth(page, SITE_NAME, [
      'search_notes',
      'list_notes',
      'get_note',
      'create_note',
      'update_note',
    ]);
    expect(granted).toEqual(['read', 'write']);
    // The code and state left the address bar: a reload cannot send them again.
    expect(new URL(page.url()).search).toBe('');
    await expectAccessible(page, 'OAuth completion');
    await screenshot(page, 'oauth-complete');
    await page.getByRole('link', { name: `Go to ${SITE_NAME}'s page` }).click();
    await page.waitForURL(`**/vault/${siteId}`);
    await page.getByText('Connected with OAuth', { exact: true }).first().waitFor();

    const created = await tryTool(page, 'create_note', { title: 'From the console', body: 'made in a browser' });
    expect(created).toMatchObject({ ok: true, result: { title: 'From the console', body: 'made in a browser' } });
    await page.getByText(/Answered in \d+ ms/).waitFor();
    await expectAccessible(page, 'tool try-out');
    await screenshot(page, 'vault-try-tool');
    const found = await tryTool(page, 'search_notes', { query: 'console' });
    expect(found.ok && JSON.stringify(found.result)).toContain('From the console');

    // The service's refusals, shown in the form: a missing required field, a scope not granted.
    const missing = await tryTool(page, 'get_note');
    expect(missing).toMatchObject({ ok: false, code: 'VALIDATION_ERROR' });
    const panel = page.getByRole('region', { name: 'Try get_note' });
    await expect(panel.getByLabel('id (required)').getAttribute('aria-invalid')).resolves.toBe('true');
    const denied = await tryTool(page, 'delete_note', { id: 'nope' });
    expect(denied).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_ERROR' });
    expect(denied.text).toContain('delete');
    await page.close();
  });

  it('the completion page: the starting user only, after signing in with the query kept; the site’s refusal shown', async () => {
    const a = await w.newPage();
    const userA = await signUp(a);
    const siteId = await addSite(a, w.site.url);
    const start = async () =>
      (
        await w.http.post(
          `/api/vault/sites/${siteId}/oauth/start`,
          { tools: ['list_notes'] },
          { token: await tokenOf(a) },
        )
      ).body.authorizationUrl as string;

    // B's browser lands with A's approval: refused, nothing stored.
    const b = await w.newPage();
    await signUp(b);
    const lured = await approveAtSite(w.sites.ca, await start());
    await b.goto(`${lured.pathname}${lured.search}`);
    await b.waitForURL((url) => url.pathname === '/oauth/complete');
    expect(await alertOf(b)).toMatchObject({ code: 'PERMISSION_DENIED' });
    await b.getByRole('heading', { name: 'The connection failed' }).waitFor();
    await b.getByText('started by another account').waitFor();

    // A, signed out in this browser: sign-in comes back to the completion page with its query.
    const fresh = await w.newPage();
    const own = await approveAtSite(w.sites.ca, await start());
    await fresh.goto(`${own.pathname}${own.search}`);
    await fresh.waitForURL((url) => url.pathname === '/signin');
    expect(decodeURIComponent(new URL(fresh.url()).searchParams.get('next') ?? '')).toContain(
      `state=${own.searchParams.get('state')}`,
    );
    await signIn(fresh, userA);
    await fresh.getByRole('heading', { name: `${SITE_NAME} is connected` }).waitFor();
    await expect(fresh.getByRole('status').filter({ hasText: 'granted' }).textContent()).resolves.toContain('read');
    // A reload has nothing to send again.
    await fresh.reload();
    await fresh.getByRole('heading', { name: 'Connect a site' }).waitFor();
    // The same approval again (the link kept elsewhere): spent, and said so.
    await fresh.goto(`${own.pathname}${own.search}`);
    expect(await alertOf(fresh)).toMatchObject({ code: 'VALIDATION_ERROR' });
    await fresh.getByText('This approval has expired or was already used').waitFor();

    // The site's refusal travels to the page, which shows it without completing anything.
    const refused = await approveAtSite(w.sites.ca, await start(), undefined, 'deny');
    await a.goto(`${refused.pathname}${refused.search}`);
    await a.getByRole('heading', { name: 'The site did not approve the connection' }).waitFor();
    await expect(a.getByRole('alert').textContent()).resolves.toContain('access_denied');
    await screenshot(a, 'oauth-refused');
    for (const page of [a, b, fresh]) {
      await page.close();
    }
  });

  it('a bearer site: store, replace (also after TOKEN_EXISTS) and remove the token', async () => {
    const page = await w.newPage();
    await signUp(page);
    w.site.manifestOverride = { json: { ...w.site.manifest(), auth: { type: 'bearer' } } };
    const siteId = await addSite(page, w.site.url);
    w.site.manifestOverride = undefined;
    await page.getByRole('heading', { name: 'API token' }).waitFor();
    const first = w.site.issueApiToken('alice').token;
    await page.getByLabel('Token', { exact: true }).fill(first);
    await page.getByLabel('Expires (optional)').fill('2030-01-01T12:00');
    await page.getByRole('button', { name: 'Store token' }).click();
    await page.getByText(`…${first.slice(-4)}`).waitFor();
    await page.getByText('Connected with a token').first().waitFor();
    await page.getByText(/2030/).first().waitFor();
    await expectAccessible(page, 'bearer token');
    const listed = await tryTool(page, 'list_notes');
    expect(listed.ok).toBe(true);

    const second = w.site.issueApiToken('alice').token;
    await page.getByLabel('New token').fill(second);
    await page.getByRole('button', { name: 'Replace token' }).click();
    await page.getByText(`…${second.slice(-4)}`).waitFor();
    await page.getByRole('button', { name: 'Remove token' }).click();
    await page.getByRole('button', { name: 'Yes, remove the token' }).click();
    await page.getByRole('button', { name: 'Store token' }).waitFor();

    // Stored meanwhile elsewhere (another tab): TOKEN_EXISTS, and the page offers to replace it.
    const token = await tokenOf(page);
    await w.http.post(`/api/vault/sites/${siteId}/token`, { token: first }, { token });
    const third = w.site.issueApiToken('alice').token;
    await page.getByLabel('Token', { exact: true }).fill(third);
    await page.getByRole('button', { name: 'Store token' }).click();
    expect(await alertOf(page)).toMatchObject({ code: 'TOKEN_EXISTS' });
    await page.getByRole('button', { name: 'Replace the stored token' }).click();
    await page.getByText(`…${third.slice(-4)}`).waitFor();
    await screenshot(page, 'vault-bearer');
    await page.close();
  });

  it('a connection the site stopped honouring is shown as needing to be connected again, with one button', async () => {
    const page = await w.newPage();
    await signUp(page);
    await addSite(page, w.site.url);
    await connectSiteByOAuth(page, SITE_NAME, ['list_notes']);
    await openSite(page, SITE_NAME);
    // The user disconnects the app on the site; the access token runs out; the refresh is refused.
    w.site.revokeAllGrants();
    w.site.expireAccessTokens();
    const refused = await tryTool(page, 'list_notes');
    expect(refused.ok).toBe(false);
    await page.reload();
    await page
      .getByRole('region', { name: 'Connection' })
      .getByText('Needs to be connected again', { exact: true })
      .waitFor();
    await page.goto('/vault');
    await page
      .getByRole('row', { name: new RegExp(SITE_NAME) })
      .getByText('Needs to be connected again')
      .waitFor();
    await openSite(page, SITE_NAME);
    await screenshot(page, 'vault-reconnect');
    await page.getByRole('button', { name: `Connect ${SITE_NAME} again` }).click();
    await page.waitForURL((url) => url.pathname === '/oauth/authorize');
    await page.getByLabel('User').fill('alice');
    await page.getByLabel('Password').fill('alice-password');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: `${SITE_NAME} is connected` }).waitFor();
    await page.getByRole('link', { name: `Go to ${SITE_NAME}'s page` }).click();
    await expect(tryTool(page, 'list_notes')).resolves.toMatchObject({ ok: true });
    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
});
