import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import {
  expectAccessible,
  screenshot,
  signUp,
  startConsoleWorld,
  tokenOf,
  WIDTHS,
  type ConsoleWorld,
} from './harness.js';
import { addSite, allowServiceCallback, tryTool } from './steps/vault.js';

const SITE_NAME = 'Reference Notebook';

/**
 * Buttons and links whose accessible name does not contain the words they show (WCAG 2.5.3, label in
 * name): the visible words are the text of the parts that take room on the screen (a visually hidden
 * addition to the name does not), the name is aria-label when set, else the whole text.
 */
async function labelNotInName(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: any }).document;
    const visibleText = (el: any): string => {
      let text = '';
      for (const node of Array.from(el.childNodes) as any[]) {
        if (node.nodeType === 3) {
          text += node.textContent ?? '';
        } else if (node.nodeType === 1) {
          const box = node.getBoundingClientRect();
          if (box.width > 1 && box.height > 1) {
            text += visibleText(node);
          }
        }
      }
      return text;
    };
    const squash = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
    const wrong: string[] = [];
    for (const el of Array.from(doc.querySelectorAll('button, a[href]')) as any[]) {
      const shown = squash(visibleText(el));
      const name = squash(el.getAttribute('aria-label') ?? el.textContent ?? '');
      if (shown !== '' && !name.includes(shown)) {
        wrong.push(`"${shown}" named "${name}"`);
      }
    }
    return wrong;
  });
}

describe('console: a site’s connection, said once, and tools of a site that is not connected', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
    allowServiceCallback(w.site, w.stack);
  });

  afterAll(async () => {
    await w?.stop();
  });

  describe.each(WIDTHS)('at %i px wide', (width) => {
    it('an OAuth site takes a pasted token; the list, the page and its connection card then agree', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      const siteId = await addSite(page, w.site.url);
      const card = page.getByRole('region', { name: 'Connection' });
      await card.getByRole('heading', { name: 'Connect with OAuth' }).waitFor();
      await card.getByRole('heading', { name: 'Or store an API token' }).waitFor();
      // The state is said once on the page, in the connection card.
      await expect(page.getByText('Not connected', { exact: true }).count()).resolves.toBe(1);
      await expect(card.getByText('Not connected', { exact: true }).count()).resolves.toBe(1);
      await expectAccessible(page, `OAuth site, not connected (${width} px)`);

      const token = w.site.issueApiToken('alice').token;
      await card.getByLabel('Token', { exact: true }).fill(token);
      await card.getByRole('button', { name: 'Store token' }).click();
      await card.getByText('Connected with a token', { exact: true }).waitFor();
      await card.getByText(`…${token.slice(-4)}`).waitFor();
      for (const contradiction of ['Not connected', 'Token stored']) {
        await expect(page.getByText(contradiction).count()).resolves.toBe(0);
      }
      await expect(page.getByText('Connected with a token', { exact: true }).count()).resolves.toBe(1);
      await expectAccessible(page, `OAuth site with a token (${width} px)`);
      await screenshot(page, `vault-oauth-site-token-${width}`);
      // The token is what the service sends: the tools answer.
      await expect(tryTool(page, 'list_notes')).resolves.toMatchObject({ ok: true });

      await page.goto('/vault');
      const row = page.getByRole('row', { name: new RegExp(SITE_NAME) });
      await row.getByText('Connected with a token', { exact: true }).waitFor();
      const stored = await w.http.get<{ credential: { kind: string } }>(`/api/vault/sites/${siteId}`, {
        token: await tokenOf(page),
      });
      expect(stored.body.credential.kind).toBe('bearer');
      await page.close();
    });

    it('trying a tool of a site that is not connected says so and points to the connection form; a token removed meanwhile reads "not connected"', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      const siteId = await addSite(page, w.site.url);
      await page.getByRole('button', { name: 'Try list_notes', exact: true }).click();
      const panel = page.getByRole('region', { name: 'Try list_notes' });
      await panel.getByText('Not connected.', { exact: true }).waitFor();
      await expect(panel.getByRole('button', { name: 'Call list_notes' }).count()).resolves.toBe(0);
      await expectAccessible(page, `tool try-out, not connected (${width} px)`);
      await panel.getByRole('link', { name: 'Go to the connection form' }).click();
      await page.waitForURL((url) => url.hash === '#connection');

      // Connected with a token, the form is there; the token is then removed in another tab.
      const card = page.getByRole('region', { name: 'Connection' });
      await card.getByLabel('Token', { exact: true }).fill(w.site.issueApiToken('alice').token);
      await card.getByRole('button', { name: 'Store token' }).click();
      await card.getByText('Connected with a token', { exact: true }).waitFor();
      const call = panel.getByRole('button', { name: 'Call list_notes' });
      await call.waitFor();
      const removed = await w.http.delete(`/api/vault/sites/${siteId}/token`, { token: await tokenOf(page) });
      expect(removed.status).toBe(204);
      const before = w.site.requestLog.length;
      await call.click();
      const alert = panel.getByRole('alert');
      await alert.waitFor();
      await expect(alert.textContent()).resolves.toContain('Not connected.');
      await alert.getByRole('link', { name: 'Go to the connection form' }).waitFor();
      await expect(page.getByText('The site answered with an error').count()).resolves.toBe(0);
      await card.getByText('Not connected', { exact: true }).waitFor();
      expect(w.site.requestLog.slice(before).filter((r) => r.path.startsWith('/api/tools/'))).toEqual([]);
      await expectAccessible(page, `tool try-out, token removed (${width} px)`);
      await screenshot(page, `vault-try-not-connected-${width}`);
      await page.close();
    });

    it('every button and link of the vault and a site page has its visible words in its accessible name', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      await addSite(page, w.site.url);
      await expect(labelNotInName(page)).resolves.toEqual([]);
      await page.goto('/vault');
      const row = page.getByRole('row', { name: new RegExp(SITE_NAME) });
      const refresh = row.getByRole('button', { name: `Refresh manifest of ${SITE_NAME}`, exact: true });
      await refresh.waitFor();
      await expect(labelNotInName(page)).resolves.toEqual([]);
      await row.getByRole('button', { name: `Remove ${SITE_NAME}`, exact: true }).click();
      await row.getByRole('button', { name: `Yes, remove ${SITE_NAME}` }).waitFor();
      await expect(labelNotInName(page)).resolves.toEqual([]);
      await expectAccessible(page, `vault list, removing a site (${width} px)`);
      await page.close();
      expect(w.pageErrors).toEqual([]);
    });
  });
});
