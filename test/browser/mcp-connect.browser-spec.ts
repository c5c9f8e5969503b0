/**
 * agentsite as an MCP server, the user's part in the console: a real authorization request of an
 * MCP client (dynamic registration, PKCE S256, a loopback redirect URI) to the service's
 * authorization server, the consent page (signed out first, then signed in; a workspace chosen;
 * approve or deny), and the account page's Connected apps with Revoke.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { callerHeaders, rawPost } from '../fixtures/mcp-server/clients.js';
import { joinWorkspace } from '../utils/workspaces.js';
import {
  decodedWidth,
  DESKTOP_WIDTH,
  expectAccessible,
  expectNoSideScroll,
  screenshot,
  signIn,
  signUp,
  startConsoleWorld,
  tokenOf,
  WIDTHS,
  type ConsoleUser,
  type ConsoleWorld,
} from './harness.js';
import {
  approveInPage,
  denyInPage,
  discoverAuthorizationServer,
  exchangeCode,
  refreshTokens,
  startAuthorization,
  startLoopbackApp,
  waitForConsent,
  type LoopbackApp,
  type McpAuthorizationServer,
} from './steps/mcp-connect.js';

interface ConnectedApp {
  id: string;
  clientName: string;
  redirectHost: string;
  workspace: { id: string; name: string } | null;
  lastUsedAt: string | null;
}

describe('console: an MCP client asks to connect; consent and connected apps', () => {
  let w: ConsoleWorld;
  let as: McpAuthorizationServer;
  let app: LoopbackApp;

  beforeAll(async () => {
    w = await startConsoleWorld();
    as = await discoverAuthorizationServer(w.consoleUrl);
    app = await startLoopbackApp({ logoCa: w.sites.ca });
  });

  afterAll(async () => {
    await app?.stop();
    await w?.stop();
  });

  /** A Team user with a workspace of their own, signed up in a page that is then closed. */
  async function teamUser(width: number, workspace: string): Promise<{ user: ConsoleUser; token: string; ws: string }> {
    const page = await w.newPage({ width });
    const user = await signUp(page);
    const token = await tokenOf(page);
    await page.close();
    const me = await w.http.get<{ id: string }>('/api/me', { token });
    const patched = await w.http.patch(`/api/admin/users/${me.body.id}`, { tier: 'team' }, { token: w.admin.token });
    expect(patched.status).toBe(200);
    const created = await w.http.post<{ id: string }>('/api/workspaces', { name: workspace }, { token });
    expect(created.status).toBe(201);
    return { user, token, ws: created.body.id };
  }

  async function connectedApps(token: string): Promise<ConnectedApp[]> {
    const listed = await w.http.get<{ apps: ConnectedApp[] }>('/api/connected-apps', { token });
    expect(listed.status).toBe(200);
    return listed.body.apps;
  }

  /** The texts of the connected apps table's rows (empty when the table is not shown). */
  async function appRows(page: Page): Promise<string[]> {
    const section = page.getByRole('region', { name: 'Connected apps' });
    await section.getByRole('heading', { name: 'Connect an app' }).waitFor();
    await section.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
    return section.locator('tbody tr').allTextContents();
  }

  describe.each(WIDTHS)('at %i px wide', (width) => {
    it('a signed-out user signs in on the way, picks a team workspace, approves; the app gets tokens; Revoke ends them', async () => {
      const { user, token, ws } = await teamUser(width, 'Research');
      const appName = `Desk Assistant ${width}`;
      const page = await w.newPage({ width });
      const request = await startAuthorization(page, as, {
        name: appName,
        redirectUri: app.redirectUri,
        logoUri: app.logoUri,
      });
      // Signed out: the sign-in page, which comes back to the consent page.
      await page.waitForURL(
        (url) => url.pathname === '/signin' && url.searchParams.get('next')?.startsWith('/connect/') === true,
      );
      await signIn(page, user);
      await waitForConsent(page, appName);
      expect(new URL(page.url()).pathname).toMatch(/^\/connect\/[^/]+$/);

      const redirectHost = new URL(app.redirectUri).host;
      await expect(page.locator('.redirect-host').textContent()).resolves.toBe(
        `After you answer, your browser goes to ${redirectHost}`,
      );
      // The app's logo, from its own https address, is shown (the consent page's policy allows it).
      const logo = page.locator('.client-card img');
      // Once loaded: read at once, an image still on its way is not yet complete.
      await expect(decodedWidth(logo)).resolves.toBe(1);
      const choices = page.getByRole('group', { name: `Where ${appName} acts` });
      await expect(choices.getByRole('radio').count()).resolves.toBe(2);
      await expect(choices.getByLabel('My account', { exact: true }).isChecked()).resolves.toBe(true);
      await choices.getByLabel('Research', { exact: true }).check();
      await page.getByRole('heading', { name: `What ${appName} will be able to do in Research` }).waitFor();
      await expect(page.locator('main').textContent()).resolves.toContain(
        "Start Research's agents and read their runs.",
      );
      await expectAccessible(page, `consent page (${width} px)`);
      await expectNoSideScroll(page, `consent page (${width} px)`);
      if (width === DESKTOP_WIDTH) {
        await screenshot(page, 'mcp-consent');
      }

      const query = await approveInPage(page, app.redirectUri);
      expect(query.get('state')).toBe(request.state);
      expect(query.get('error')).toBeNull();
      const code = query.get('code');
      expect(code).toEqual(expect.any(String));
      await page.getByRole('heading', { name: 'Back in the test app' }).waitFor();

      const tokens = await exchangeCode(as, request, code!);
      expect(tokens).toMatchObject({
        status: 200,
        body: { access_token: expect.any(String), refresh_token: expect.any(String) },
      });
      // The refresh token works while the app is connected (and rotates).
      const refreshed = await refreshTokens(as, request, tokens.body.refresh_token!);
      expect(refreshed).toMatchObject({ status: 200, body: { refresh_token: expect.any(String) } });

      const apps = await connectedApps(token);
      expect(apps).toEqual([
        expect.objectContaining({ clientName: appName, redirectHost, workspace: { id: ws, name: 'Research' } }),
      ]);
      expect(apps[0]!.lastUsedAt).toBeNull();
      // The app uses its access token at /mcp: the list then says when.
      const accessToken = refreshed.body.access_token!;
      const listed = await rawPost(
        as.resource,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        callerHeaders(accessToken),
      );
      expect(listed.status).toBe(200);
      expect((await connectedApps(token))[0]!.lastUsedAt).toEqual(expect.any(String));

      // The account page lists it, with where it acts; Revoke asks first, then ends it.
      await page.goto('/account#connected-apps');
      await page.getByRole('heading', { name: 'Your account' }).waitFor();
      const rows = await appRows(page);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain(appName);
      expect(rows[0]).toContain(redirectHost);
      expect(rows[0]).toContain('Research');
      expect(rows[0]).not.toContain('Not yet');
      await expectAccessible(page, `connected apps (${width} px)`);
      await expectNoSideScroll(page, `connected apps (${width} px)`);
      if (width === DESKTOP_WIDTH) {
        await screenshot(page, 'connected-apps');
      }
      const section = page.getByRole('region', { name: 'Connected apps' });
      await section.getByRole('button', { name: `Revoke ${appName}` }).click();
      await expect(section.getByRole('status').first().textContent()).resolves.toContain('loses its access at once');
      await section.getByRole('button', { name: `Yes, disconnect ${appName}` }).click();
      await section.getByText('No app is connected to your account.').waitFor();
      expect(await connectedApps(token)).toEqual([]);

      // The app's refresh token and access token are refused from now on.
      const refused = await refreshTokens(as, request, refreshed.body.refresh_token!);
      expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      const afterRevoke = await rawPost(
        as.resource,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        callerHeaders(accessToken),
      );
      expect(afterRevoke.status).toBe(401);
      await page.close();
    });

    it('a new user signs up on the way and denies: the app gets access_denied and nothing is connected', async () => {
      const appName = `Code Editor ${width}`;
      const page = await w.newPage({ width });
      const request = await startAuthorization(page, as, { name: appName, redirectUri: app.redirectUri });
      await page.waitForURL((url) => url.pathname === '/signin');
      // The header's link keeps the way back to the consent page, as the sign-in page's own does.
      await page.getByRole('banner').getByRole('link', { name: 'Create an account' }).click();
      await page.waitForURL((url) => url.pathname === '/signup');
      await page.getByLabel('Email').fill(`consent-${width}-${Date.now()}@example.com`);
      await page.getByLabel('Password').fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('heading', { name: 'Terms of service' }).waitFor();
      await page.getByLabel(/I accept the terms/).check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await waitForConsent(page, appName);
      // A user without workspaces acts in their own account; no logo was registered.
      const choices = page.getByRole('group', { name: `Where ${appName} acts` });
      await expect(choices.getByRole('radio').count()).resolves.toBe(1);
      await expect(page.locator('.client-card img').count()).resolves.toBe(0);
      const token = await tokenOf(page);

      const query = await denyInPage(page, app.redirectUri);
      expect(query.get('error')).toBe('access_denied');
      expect(query.get('state')).toBe(request.state);
      expect(query.get('code')).toBeNull();
      expect(await connectedApps(token)).toEqual([]);

      // The request is spent: its page now says so in words, no code or address of the API.
      await page.goBack();
      await page.getByRole('heading', { name: 'This connection request has ended' }).waitFor();
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text).not.toMatch(/SESSION_NOT_FOUND|NOT_FOUND|\/api\//);
      await expectAccessible(page, `ended consent request (${width} px)`);
      await page.close();
    });
  });

  it('a viewer of a workspace is told the app will only see there, and an unknown request is explained', async () => {
    const owner = await teamUser(DESKTOP_WIDTH, 'Archive');
    const page = await w.newPage();
    const viewer = await signUp(page);
    const viewerToken = await tokenOf(page);
    await joinWorkspace(w.http, owner.ws, owner.token, { email: viewer.email, token: viewerToken }, 'viewer');
    const appName = 'Read Only Reader';
    await startAuthorization(page, as, { name: appName, redirectUri: app.redirectUri });
    await waitForConsent(page, appName);
    await page
      .getByRole('group', { name: `Where ${appName} acts` })
      .getByLabel('Archive', { exact: true })
      .check();
    await expect(page.locator('main').textContent()).resolves.toContain(
      'It cannot call tools or start agents there: your role is viewer.',
    );

    await page.goto('/connect/no-such-request');
    await page.getByRole('heading', { name: 'This connection request has ended' }).waitFor();
    await expect(page.locator('main').textContent()).resolves.not.toMatch(/SESSION_NOT_FOUND|\/api\//);
    await page.close();
  });
});
