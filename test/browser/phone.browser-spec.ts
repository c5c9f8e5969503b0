/**
 * Every page of the console on a phone (320, 390 and 430 px wide) and on a laptop (1280 px): no page
 * scrolls sideways or cuts anything off, axe-core finds no serious or critical problem, the navigation
 * (folded into a menu on a phone) reaches every page and Sign out. And what a first visit shows: what
 * agentsite is, what to do first, the demo site to start with.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page, Request } from 'playwright-core';
import { eventually } from '../utils/runs.js';
import {
  type ConsoleUser,
  type ConsoleWorld,
  DESKTOP_WIDTH,
  PHONE_WIDTH,
  expectAccessible,
  expectNoSideScroll,
  screenshot,
  signIn,
  signUp,
  startConsoleWorld,
  tokenOf,
} from './harness.js';
import { NAV_LINKS, navigateTo, navigationFolded, openNavigation, signOutFromNavigation } from './steps/navigation.js';

/** The narrowest phone still in use, an ordinary one, a large one, and a laptop. */
const ALL_WIDTHS = [320, PHONE_WIDTH, 430, DESKTOP_WIDTH] as const;
/** Pages of which the 390 px run keeps a screenshot (phone-<name>.png). */
const SHOTS = new Set(['vault', 'site', 'agent', 'run', 'billing', 'workspace']);

interface Data {
  siteId: string;
  agentId: string;
  runId: string;
  sessionId: string;
  workspaceId: string;
}

interface ConsolePage {
  name: string;
  path: string;
  /** The page's h1. */
  heading: string | RegExp;
}

/** Every route of console/src/App.tsx, with the data built below. */
function consolePages(d: Data): ConsolePage[] {
  return [
    { name: 'vault', path: '/vault', heading: 'Vault' },
    { name: 'site', path: `/vault/${d.siteId}`, heading: 'Reference Notebook' },
    { name: 'check', path: '/check', heading: 'Check a site' },
    { name: 'chat', path: '/chat', heading: 'Chat' },
    { name: 'chat-session', path: `/chat/${d.sessionId}`, heading: 'Chat' },
    { name: 'agents', path: '/agents', heading: 'Agents' },
    { name: 'new-agent', path: '/agents/new', heading: 'New agent' },
    { name: 'agent', path: `/agents/${d.agentId}`, heading: 'Note reader' },
    { name: 'edit-agent', path: `/agents/${d.agentId}/edit`, heading: 'Edit Note reader' },
    { name: 'run', path: `/runs/${d.runId}`, heading: `Run ${d.runId.slice(0, 8)}` },
    { name: 'approvals', path: '/approvals', heading: 'Approvals' },
    { name: 'billing', path: '/billing', heading: 'Plan & credits' },
    { name: 'workspaces', path: '/workspaces', heading: 'Workspaces' },
    { name: 'workspace', path: `/workspaces/${d.workspaceId}`, heading: 'Workspace Acme' },
    { name: 'account', path: '/account', heading: 'Your account' },
    { name: 'admin', path: '/admin', heading: 'Admin: users' },
    { name: 'oauth-complete', path: '/oauth/complete', heading: 'Connect a site' },
    { name: 'consent-ended', path: '/connect/unknown', heading: 'This connection request has ended' },
    { name: 'not-found', path: '/no-such-page', heading: 'Page not found' },
  ];
}

/** The pages of a visitor who is not signed in. */
const SIGNED_OUT_PAGES: ConsolePage[] = [
  { name: 'signin', path: '/signin', heading: 'Sign in' },
  { name: 'signup', path: '/signup', heading: 'Create an account' },
];

/** The requests a page has sent and not yet seen answered (or failed), and who waits for none. */
interface Traffic {
  pending: Set<Request>;
  waiting: Array<() => void>;
}

const traffic = new WeakMap<Page, Traffic>();

function trafficOf(page: Page): Traffic {
  let seen = traffic.get(page);
  if (seen === undefined) {
    const state: Traffic = { pending: new Set(), waiting: [] };
    const done = (request: Request) => {
      state.pending.delete(request);
      if (state.pending.size === 0) {
        state.waiting.splice(0).forEach((resolve) => resolve());
      }
    };
    page.on('request', (request) => state.pending.add(request));
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    traffic.set(page, state);
    seen = state;
  }
  return seen;
}

/**
 * Until every request the page sent has its answer and the page has rendered two frames since without
 * sending another (what an answer's render asks for next is sent by then). Playwright's `networkidle`
 * waited for the same, plus a fixed 500 ms of quiet on every visit: about a minute of this suite.
 */
async function settled(page: Page): Promise<void> {
  const seen = trafficOf(page);
  for (;;) {
    if (seen.pending.size > 0) {
      await new Promise<void>((resolve) => seen.waiting.push(resolve));
    }
    await page.evaluate(
      () =>
        new Promise<void>((resolve) => {
          const frame = (globalThis as unknown as { requestAnimationFrame(next: () => void): void })
            .requestAnimationFrame;
          frame(() => frame(() => resolve()));
        }),
    );
    if (seen.pending.size === 0) {
      return;
    }
  }
}

/** Opens a page and waits until it shows what it loads. */
async function visit(page: Page, target: ConsolePage): Promise<void> {
  trafficOf(page);
  await page.goto(target.path);
  await page.getByRole('heading', { level: 1, name: target.heading }).waitFor();
  await settled(page);
  await page.locator('.busy').waitFor({ state: 'detached' });
}

describe('console on a phone and a laptop: every page', () => {
  let w: ConsoleWorld;
  let user: ConsoleUser;
  let data: Data;

  beforeAll(async () => {
    w = await startConsoleWorld({ demoSite: true });
    // One user with a bit of everything, made an admin (for the Admin page) on tier team (for a workspace).
    const page = await w.newPage();
    user = await signUp(page);
    const token = await tokenOf(page);
    const me = (await w.http.get<{ id: string }>('/api/me', { token })).body;
    const patched = await w.http.patch(
      `/api/admin/users/${me.id}`,
      { tier: 'team', credits: 100_000, role: 'admin' },
      { token: w.admin.token },
    );
    expect(patched.status).toBe(200);
    await eventually('the user is an admin', async () =>
      (await w.http.get<{ role: string }>('/api/me', { token })).body.role === 'admin' ? true : undefined,
    );
    const siteId = (await w.http.post<{ id: string }>('/api/vault/sites', { url: w.site.url }, { token })).body.id;
    await w.http.post(`/api/vault/sites/${siteId}/token`, { token: w.site.issueApiToken('alice').token }, { token });
    const agentId = (
      await w.http.post<{ id: string }>(
        '/api/agents',
        { name: 'Note reader', systemPrompt: 'You read notes.', siteIds: [siteId], trigger: { type: 'manual' } },
        { token },
      )
    ).body.id;
    w.model.script({ text: 'You have no notes yet.' });
    const runId = (
      await w.http.post<{ id: string }>(`/api/agents/${agentId}/runs`, { input: 'List my notes' }, { token })
    ).body.id;
    await eventually('the run completed', async () =>
      (await w.http.get<{ status: string }>(`/api/runs/${runId}`, { token })).body.status === 'completed'
        ? true
        : undefined,
    );
    const session = await w.http.post<{ id: string }>(
      '/api/sessions',
      { sites: [{ siteId }], title: 'My notes' },
      { token },
    );
    expect(session.status).toBe(201);
    const workspace = await w.http.post<{ id: string }>('/api/workspaces', { name: 'Acme' }, { token });
    expect(workspace.status).toBe(201);
    data = { siteId, agentId, runId, sessionId: session.body.id, workspaceId: workspace.body.id };
    await page.close();
    // The world, a user and a completed run: more than a minute on a loaded machine.
  }, 180_000);

  afterAll(async () => {
    await w?.stop();
  });

  it.each(ALL_WIDTHS)(
    'at %i px every page fits the width, is accessible, and the navigation reaches every page and Sign out',
    async (width) => {
      const page = await w.newPage({ width });
      for (const target of SIGNED_OUT_PAGES) {
        await visit(page, target);
        await expectNoSideScroll(page, `${target.name} at ${width} px`);
        await expectAccessible(page, `${target.name} at ${width} px`);
        if (width === PHONE_WIDTH) {
          await screenshot(page, `phone-${target.name}`);
        }
      }
      await signIn(page, user);
      for (const target of consolePages(data)) {
        await visit(page, target);
        await expectNoSideScroll(page, `${target.name} at ${width} px`);
        await expectAccessible(page, `${target.name} at ${width} px`);
        if (width === PHONE_WIDTH && SHOTS.has(target.name)) {
          await screenshot(page, `phone-${target.name}`);
        }
      }

      // The header: folded behind Menu below the breakpoint, a row of links on a laptop.
      await visit(page, { name: 'vault', path: '/vault', heading: 'Vault' });
      // A table keeps its rows and cells (for screen readers); below 700 px a cell is led by its column's name.
      const row = page.getByRole('row').filter({ hasText: 'Reference Notebook' });
      await expect(row.count()).resolves.toBe(1);
      const address = row.getByRole('cell').first();
      await expect(address.getAttribute('data-label')).resolves.toBe('Address');
      const before = await address.evaluate(
        (cell) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): { content: string } }
          ).getComputedStyle(cell, '::before').content,
      );
      expect({ width, labelShown: before !== 'none' && before !== 'normal' }).toEqual({
        width,
        labelShown: width < 700,
      });
      expect(await navigationFolded(page)).toBe(width < DESKTOP_WIDTH);
      if (width < DESKTOP_WIDTH) {
        await expect(page.getByRole('navigation', { name: 'Main' }).isVisible()).resolves.toBe(false);
        await openNavigation(page);
        await expectNoSideScroll(page, `the open menu at ${width} px`);
        await expectAccessible(page, `the open menu at ${width} px`);
        if (width === PHONE_WIDTH) {
          await screenshot(page, 'phone-menu');
        }
      }
      // Every link is shown and leads to its page; following one closes the menu.
      for (const name of [...NAV_LINKS, 'Admin', user.email]) {
        await openNavigation(page);
        await expect(page.getByRole('banner').getByRole('link', { name, exact: true }).isVisible()).resolves.toBe(true);
        await navigateTo(page, name);
        await page.getByRole('heading', { level: 1 }).waitFor();
        if (width < DESKTOP_WIDTH) {
          await expect(page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).resolves.toBe('false');
          await expect(page.getByRole('navigation', { name: 'Main' }).isVisible()).resolves.toBe(false);
        }
      }
      expect(new URL(page.url()).pathname).toBe('/account');

      // The workspace the user acts in is named under every page's heading.
      await openNavigation(page);
      await page.getByLabel('Acting in').selectOption(data.workspaceId);
      for (const target of [consolePages(data)[0]!, consolePages(data)[5]!]) {
        await visit(page, target);
        const line = page.getByText('In the workspace Acme (owner)');
        await expect(line.isVisible()).resolves.toBe(true);
        await expect(
          page
            .getByRole('heading', { level: 1 })
            .evaluate((h, id) => h.getAttribute('aria-describedby') === id, await line.getAttribute('id')),
        ).resolves.toBe(true);
        await expectNoSideScroll(page, `${target.name} in a workspace at ${width} px`);
      }
      await openNavigation(page);
      await page.getByLabel('Acting in').selectOption('');
      await page.getByText('In the workspace Acme').waitFor({ state: 'detached' });

      // Sign out, from the navigation.
      await signOutFromNavigation(page);
      await page.goto('/vault');
      await page.waitForURL('**/signin?next=%2Fvault');
      expect(w.pageErrors).toEqual([]);
      await page.close();
    },
    // Nineteen pages, each checked by axe-core, and the navigation's eight links.
    240_000,
  );

  it('opens and closes the menu from the keyboard at 390 px: Enter opens it, Escape closes it and gives the focus back', async () => {
    const page = await w.newPage({ width: PHONE_WIDTH });
    await signIn(page, user);
    const button = page.getByRole('button', { name: 'Menu' });
    await expect(button.getAttribute('aria-controls')).resolves.toBeTruthy();
    await button.focus();
    await page.keyboard.press('Enter');
    await expect(button.getAttribute('aria-expanded')).resolves.toBe('true');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.waitFor();
    // Tab reaches the first link right after the button.
    await page.keyboard.press('Tab');
    await expect(
      nav.getByRole('link', { name: 'Vault' }).evaluate((a) => a === a.ownerDocument.activeElement),
    ).resolves.toBe(true);
    await page.keyboard.press('Escape');
    await expect(button.getAttribute('aria-expanded')).resolves.toBe('false');
    await nav.waitFor({ state: 'hidden' });
    await expect(button.evaluate((b) => b === b.ownerDocument.activeElement)).resolves.toBe(true);
    // A tap outside closes it too.
    await button.click();
    await nav.waitFor();
    await page.getByRole('heading', { level: 1 }).click();
    await nav.waitFor({ state: 'hidden' });
    await page.close();
  });

  it('explains agentsite on a first visit, with the demo site to add first; an empty vault offers to add it', async () => {
    const page = await w.newPage({ width: PHONE_WIDTH });
    await page.goto('/');
    await page.waitForURL('**/signin?next=%2Fvault');
    await page.getByRole('heading', { name: 'What agentsite does' }).waitFor();
    const steps = page.getByRole('list').filter({ hasText: 'Add a site' });
    await expect(steps.getByRole('listitem').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Add a site/),
      expect.stringMatching(/^Connect it/),
      expect.stringMatching(/^Chat with it, or build an agent/),
    ]);
    // The demo site that `npm start` runs (here the world's reference site, announced as it does).
    await expect(page.getByText(/runs a demo site at/).textContent()).resolves.toContain(w.site.url);
    await expectNoSideScroll(page, 'first visit');
    await expectAccessible(page, 'first visit');
    await screenshot(page, 'phone-first-visit');
    // The way on: Create an account.
    await page.getByRole('main').getByRole('link', { name: 'Create an account' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
    await page.getByText(/runs a demo site at/).waitFor();

    // A new user's empty vault: the demo site, its address shown, added with one button.
    await signUp(page);
    const suggestion = page.getByRole('region', { name: 'Start with the demo site' });
    await expect(suggestion.textContent()).resolves.toContain(w.site.url);
    await expectNoSideScroll(page, 'empty vault');
    await expectAccessible(page, 'empty vault');
    await screenshot(page, 'phone-empty-vault');
    await suggestion.getByRole('button', { name: 'Add the demo site' }).click();
    await page.waitForURL(/\/vault\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { level: 1, name: 'Reference Notebook' }).waitFor();
    // Signing out from the menu at 390 px.
    await signOutFromNavigation(page);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });
});
