import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectAccessible,
  screenshot,
  signUp,
  startConsoleWorld,
  tokenOf,
  WIDTHS,
  type ConsoleWorld,
} from './harness.js';
import { addSite, allowServiceCallback, connectSiteByOAuth } from './steps/vault.js';

const SITE_NAME = 'Reference Notebook';
/** The access token's lifetime the site grants (and no refresh token): long enough to read the page. */
const TTL_SECONDS = 10;

/**
 * A site whose OAuth grant has no refresh token: the vault says when the connection ends and that it
 * must be reconnected then; once it ended, that it expired, with the way to reconnect.
 */
describe('console: an OAuth connection without a refresh token says when it ends, then that it expired', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
    allowServiceCallback(w.site, w.stack);
    w.site.issueRefreshTokens = false;
    w.site.accessTokenTtlSeconds = TTL_SECONDS;
  }, 180_000);

  afterAll(async () => {
    await w?.stop();
  });

  describe.each(WIDTHS)('at %i px wide', (width) => {
    it('"Connected — expires at <local time>, reconnect then", then "Expired at …: reconnect"', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      const siteId = await addSite(page, w.site.url);
      await connectSiteByOAuth(page, SITE_NAME);
      await page.goto(`/vault/${siteId}`);
      const described = await w.http.get<{ credential: { connection: { expiresAt: string } } }>(
        `/api/vault/sites/${siteId}`,
        { token: await tokenOf(page) },
      );
      const expiresAt = described.body.credential.connection.expiresAt;
      // The time as the reader's browser writes it (its locale and time zone).
      const local = await page.evaluate((iso) => new Date(iso).toLocaleString(), expiresAt);

      const card = page.getByRole('region', { name: 'Connection' });
      // The card's first status line says its state (the OAuth form has one of its own below).
      const status = card.getByRole('status').first();
      await status.getByText('Connected with OAuth', { exact: true }).waitFor();
      await expect(status.textContent()).resolves.toContain(`Connected — expires at ${local}, reconnect then`);
      await expectAccessible(page, `OAuth without refresh token, connected (${width} px)`);
      await screenshot(page, `vault-oauth-expires-${width}`);

      await page.waitForTimeout(Math.max(Date.parse(expiresAt) - Date.now(), 0) + 500);
      await page.reload();
      await status.getByText('Connection expired', { exact: true }).waitFor();
      await expect(status.textContent()).resolves.toContain(`Expired at ${local}: reconnect ${SITE_NAME}`);
      await card.getByRole('button', { name: `Connect ${SITE_NAME} again` }).waitFor();
      // Said once on the page, and the same in the vault's list.
      await expect(page.getByText('Connected with OAuth', { exact: true }).count()).resolves.toBe(0);
      await expectAccessible(page, `OAuth without refresh token, expired (${width} px)`);
      await screenshot(page, `vault-oauth-expired-${width}`);
      await page.goto('/vault');
      await page
        .getByRole('row', { name: new RegExp(SITE_NAME) })
        .getByText('Connection expired', { exact: true })
        .waitFor();
      await expectAccessible(page, `vault list, OAuth connection expired (${width} px)`);
      await page.close();
      expect(w.pageErrors).toEqual([]);
    });
  });
});
