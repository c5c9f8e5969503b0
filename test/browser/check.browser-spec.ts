import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectAccessible, screenshot, signUp, startConsoleWorld, type ConsoleWorld } from './harness.js';
import { addSite } from './steps/vault.js';

describe('console: checking a site for site authors', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    // Each request of a check takes an outgoing slot: a budget that a whole check fits in.
    w = await startConsoleWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000' } });
    // The site registers the service's callback, as a site that agentsite connects to does.
    w.site.allowRedirect('agentsite', `${w.stack.baseUrl}/api/oauth/callback`);
  });

  afterAll(async () => {
    await w?.stop();
  });

  it('runs the conformance rules against the reference site and shows each rule with its result', async () => {
    const page = await w.newPage();
    await signUp(page);
    // The API checks only a site of the vault.
    await addSite(page, w.site.url);
    await page.getByRole('link', { name: 'Check a site' }).click();
    await page.getByRole('heading', { name: 'Check a site' }).waitFor();
    await page.getByLabel('Site address').fill(w.site.url);
    await page.getByLabel("Test account's bearer token (optional)").fill(w.site.issueApiToken('root').token);
    await page.getByRole('button', { name: 'Check' }).click();
    const report = page.getByTestId('conformance-report');
    await report.waitFor();
    const row = (id: string) => report.getByRole('row').filter({ hasText: id });
    await expect(row('tools.search_notes.input').textContent()).resolves.toMatch(/^pass/);
    await expect(row('tools.rate-limit').textContent()).resolves.toMatch(/Retry-After/);
    await expect(row('oauth.state').textContent()).resolves.toMatch(/^skipped.*agentsite-check/);
    await expect(page.getByRole('heading', { level: 2, name: w.site.url }).textContent()).resolves.toMatch(
      /0 failed, 3 skipped/,
    );
    await expectAccessible(page, 'site check');
    await screenshot(page, 'check');
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });
});
