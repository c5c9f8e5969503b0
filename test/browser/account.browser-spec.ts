import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectAccessible,
  screenshot,
  signIn,
  signUp,
  startConsoleWorld,
  tokenOf,
  type ConsoleWorld,
} from './harness.js';

describe('console: sign up, terms, sign in and out', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  it('is served at / and sends a visitor to sign in, accessibly', async () => {
    const page = await w.newPage();
    const answer = await page.goto('/');
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForURL('**/signin?next=**');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'sign in');
    await screenshot(page, 'signin');
    await page.close();
  });

  it('shows the API’s refusal next to the field, then signs up through the terms step', async () => {
    const page = await w.newPage();
    await page.goto('/signup');
    await page.getByLabel('Email').fill(`short-${Date.now()}@example.com`);
    // The browser's own minlength check would stop a short password: remove it to reach the API.
    await page.getByLabel('Password').evaluate((input) => input.removeAttribute('minlength'));
    await page.getByLabel('Password').fill('too-short');
    await page.getByRole('button', { name: 'Create account' }).click();
    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toContain('VALIDATION_ERROR');
    await expect(alert.textContent()).resolves.toMatch(/password/);
    await expect(page.getByLabel('Password').getAttribute('aria-invalid')).resolves.toBe('true');

    const user = await signUp(page);
    expect(new URL(page.url()).pathname).toBe('/vault');
    // A reload keeps the user signed in.
    await page.reload();
    await page.getByRole('link', { name: user.email }).waitFor();
    await page.close();
  });

  it('stops at the terms step until the user accepts', async () => {
    const page = await w.newPage();
    await page.goto('/signup');
    await page.getByLabel('Email').fill(`terms-${Date.now()}@example.com`);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Terms of service' }).waitFor();
    await expect(page.getByRole('button', { name: 'Continue' }).isDisabled()).resolves.toBe(true);
    await expectAccessible(page, 'terms');
    await screenshot(page, 'terms');
    // Any console page leads back here until the terms are accepted.
    await page.goto('/agents');
    await page.waitForURL('**/terms?next=%2Fagents');
    await page.getByLabel(/I accept the terms/).check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL('**/agents');
    await page.close();
  });

  it('comes back to the page asked for after signing in, and signs out everywhere', async () => {
    const first = await w.newPage();
    const user = await signUp(first);
    const second = await w.newPage();
    await second.goto('/account');
    await second.waitForURL('**/signin?next=%2Faccount');
    await signIn(second, user);
    expect(new URL(second.url()).pathname).toBe('/account');
    await second.getByRole('heading', { name: 'Your account' }).waitFor();
    await expectAccessible(second, 'account');

    await first.goto('/account');
    await first.getByRole('button', { name: 'Sign out everywhere' }).click();
    // Signed out: the sign-in page (with or without a ?next= back to the account page).
    await first.waitForURL((url) => url.pathname === '/signin');
    // The other device's token is revoked: its next request signs it out, saying why.
    await second.reload();
    await second.waitForURL('**/signin**');
    await expect(second.getByRole('status').textContent()).resolves.toMatch(/signed out/i);
    await first.close();
    await second.close();
  });

  it('keeps the session in an HttpOnly cookie: after sign-in no script-readable storage holds the token', async () => {
    const first = await w.newPage();
    const user = await signUp(first);
    await first.close();
    const page = await w.newPage();
    await signIn(page, user);
    await page.getByRole('link', { name: user.email }).waitFor();
    const token = await tokenOf(page);
    const seen = await page.evaluate(() => {
      interface Store {
        length: number;
        key(index: number): string | null;
        getItem(key: string): string | null;
      }
      const storage = (globalThis as unknown as { localStorage: Store }).localStorage;
      const session = (globalThis as unknown as { sessionStorage: Store }).sessionStorage;
      const values = (store: Store) =>
        Array.from({ length: store.length }, (_, i) => `${store.key(i)}=${store.getItem(store.key(i)!)}`);
      return {
        storage: [...values(storage), ...values(session)],
        cookie: (globalThis as unknown as { document: { cookie: string } }).document.cookie,
      };
    });
    expect(seen.storage.join('\n')).not.toContain(token);
    expect(seen.storage.join('\n')).not.toMatch(/eyJ/);
    expect(seen.storage.some((entry) => entry.startsWith('agentsite.token='))).toBe(false);
    // The page's script sees the CSRF cookie, never the session's.
    expect(seen.cookie).toContain('agentsite_csrf=');
    expect(seen.cookie).not.toContain(token);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'agentsite_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api' });
    // The console still changes things (its CSRF token goes with them) and signs out.
    await page.goto('/account');
    // The account page's own Sign out (the navigation has one too).
    await page.getByRole('main').getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/signin');
    expect((await page.context().cookies()).filter((c) => c.name.startsWith('agentsite_'))).toEqual([]);
    await page.close();
  });

  it('answers an unknown console address with its own page, and no error escaped the code', async () => {
    const page = await w.newPage();
    await signUp(page);
    await page.goto('/no-such-page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
});
