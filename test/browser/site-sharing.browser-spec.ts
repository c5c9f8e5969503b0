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
import { addSite } from './steps/vault.js';

const SITE_NAME = 'Reference Notebook';

describe('console: moving a site into a workspace, and an agent that uses it', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  /** A new Team user of the console with a workspace they own; returns the page, token and workspace id. */
  async function teamUser(width: number, workspaceName: string): Promise<{ page: Page; token: string; ws: string }> {
    const page = await w.newPage({ width });
    await signUp(page);
    const token = await tokenOf(page);
    const me = await w.http.get<{ id: string }>('/api/me', { token });
    const patched = await w.http.patch(`/api/admin/users/${me.body.id}`, { tier: 'team' }, { token: w.admin.token });
    expect(patched.status).toBe(200);
    const workspace = await w.http.post<{ id: string }>('/api/workspaces', { name: workspaceName }, { token });
    expect(workspace.status).toBe(201);
    return { page, token, ws: workspace.body.id };
  }

  async function siteIds(token: string, ws?: string): Promise<string[]> {
    const listed = await w.http.get<{ items: Array<{ id: string }> }>('/api/vault/sites', {
      token,
      headers: ws === undefined ? {} : { 'x-workspace-id': ws },
    });
    expect(listed.status).toBe(200);
    return listed.body.items.map((s) => s.id);
  }

  describe.each(WIDTHS)('at %i px wide', (width) => {
    it('a site of one’s own vault moves into a workspace one administers, from its page', async () => {
      const { page, token, ws } = await teamUser(width, 'Research');
      const siteId = await addSite(page, w.site.url);
      const panel = page.getByRole('region', { name: 'Move to a workspace' });
      await expect(panel.textContent()).resolves.toContain('It leaves your own vault');
      await expect(panel.getByLabel('Workspace to move it to').inputValue()).resolves.toBe(ws);
      await expectAccessible(page, `site page with its move panel (${width} px)`);
      await panel.getByRole('button', { name: `Move ${SITE_NAME}` }).click();
      await panel.getByRole('button', { name: 'Move it' }).click();
      // The console now acts in the workspace, where the site is, with the same id.
      await page.getByRole('region', { name: 'Move to a workspace' }).waitFor({ state: 'detached' });
      await page.getByRole('heading', { level: 1, name: SITE_NAME }).waitFor();
      await expect(page.getByLabel('Acting in').inputValue()).resolves.toBe(ws);
      expect(await siteIds(token, ws)).toEqual([siteId]);
      expect(await siteIds(token)).toEqual([]);
      await expectAccessible(page, `site page in the workspace (${width} px)`);
      await page.close();
    });

    it('an agent’s move names the sites the workspace lacks, offers to move each, and says the same when refused', async () => {
      const { page, token, ws } = await teamUser(width, 'Ops team');
      const site = await w.http.post<{ id: string }>('/api/vault/sites', { url: w.site.url }, { token });
      expect(site.status).toBe(201);
      const agent = await w.http.post<{ id: string }>(
        '/api/agents',
        { name: 'Note keeper', systemPrompt: 'Keep notes.', siteIds: [site.body.id], trigger: { type: 'manual' } },
        { token },
      );
      expect(agent.status).toBe(201);
      // The session's workspaces answered after the agent (as on a slow link): the panel still
      // offers the first workspace once they arrive.
      await page.route(
        (url) => url.pathname === '/api/workspaces',
        async (route) => {
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          await route.continue();
        },
      );
      await page.goto(`/agents/${agent.body.id}`);
      const panel = page.getByRole('region', { name: 'Move to a workspace' });
      await panel.getByText('Ops team does not have a site this agent uses').waitFor();
      await panel.getByText(`${SITE_NAME} is only in your own vault.`).waitFor();
      await expectAccessible(page, `agent move panel, a site missing (${width} px)`);

      // Moved anyway: refused, and said in the same words, not the API's.
      await panel.getByRole('button', { name: 'Move agent' }).click();
      await panel.getByRole('button', { name: 'Move it' }).click();
      const refused = panel.getByRole('alert');
      await refused.getByText('The agent was not moved.').waitFor();
      const said = (await refused.textContent()) ?? '';
      expect(said).toContain('Ops team does not have a site this agent uses');
      expect(said).toContain(`${SITE_NAME} is only in your own vault.`);
      expect(said).not.toMatch(/siteIds|no site|VALIDATION_ERROR/);
      await expectAccessible(page, `agent move refused for a missing site (${width} px)`);
      await screenshot(page, `agent-move-missing-site-${width}`);

      // The site moves from here; then the agent does.
      await panel.getByRole('button', { name: `Move ${SITE_NAME} into Ops team` }).click();
      await expect(
        panel.getByRole('group', { name: `Move ${SITE_NAME} into Ops team` }).textContent(),
      ).resolves.toContain('It leaves your own vault');
      await panel.getByRole('button', { name: 'Move it' }).click();
      await panel.getByText('does not have a site this agent uses').waitFor({ state: 'detached' });
      expect(await siteIds(token, ws)).toEqual([site.body.id]);
      await panel.getByRole('button', { name: 'Move agent' }).click();
      await panel.getByRole('button', { name: 'Move it' }).click();
      await page.getByRole('heading', { name: 'Move to a workspace' }).waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'Note keeper', level: 1 }).waitFor();
      await expect(page.getByLabel('Acting in').inputValue()).resolves.toBe(ws);
      const moved = await w.http.get<{ items: Array<{ id: string }> }>('/api/agents', {
        token,
        headers: { 'x-workspace-id': ws },
      });
      expect(moved.body.items.map((a) => a.id)).toEqual([agent.body.id]);
      await expectAccessible(page, `agent in the workspace (${width} px)`);
      await page.close();
      expect(w.pageErrors).toEqual([]);
    });
  });
});
