import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toolNamed } from '../fixtures/fake-model.js';
import { eventually } from '../utils/runs.js';
import { connectSite, registerUser, registerUserWith, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';
import { expectAccessible, screenshot, signIn, startConsoleWorld, WIDTHS, type ConsoleWorld } from './harness.js';
import { runNow } from './steps/agents.js';
import { decide, fillPolicy, inboxItem, openInWorkspace, shownInput, waitForWaitingCount } from './steps/approvals.js';
import { navigateTo } from './steps/navigation.js';

const SITE_NAME = 'Reference Notebook';
const CALL = `create_note on ${SITE_NAME}`;

/**
 * Issue 39 in the console: an agent whose policy lists "write" waits before it writes; the navigation
 * counts what waits, the inbox shows the call in words and takes the decision, and the run's timeline
 * tells the request and the decision. One user (signed in at each width) and one world for the file.
 */
describe('console: approvals', () => {
  let w: ConsoleWorld;
  let user: TestUser;
  /** A Team workspace: its owner, a viewer, and an agent there whose write calls wait. */
  let team: { owner: TestUser; viewer: TestUser; workspaceId: string; agentId: string };

  /**
   * A user with more waiting calls than the badge's page (21: the count reads "20+"), one approved,
   * and a run whose call waited a minute with no decision (its policy's shortest wait).
   */
  let busy: { user: TestUser; expiredRunId: string };

  beforeAll(async () => {
    w = await startConsoleWorld();
    busy = await startBusyUser();
    user = await registerUserWith(w.http, w.admin, { credits: 10_000 });
    await connectSite(w.http, { token: user.token }, w.site);

    const owner = await registerUser(w.http);
    const viewer = await registerUser(w.http);
    const tier = await w.http.patch(
      `/api/admin/users/${owner.id}`,
      { tier: 'team', credits: 10_000 },
      { token: w.admin.token },
    );
    expect(tier.status).toBe(200);
    const ws = await w.http.post<{ id: string }>('/api/workspaces', { name: 'Notes team' }, { token: owner.token });
    expect(ws.status).toBe(201);
    const inWs = { 'x-workspace-id': ws.body.id };
    await joinWorkspace(w.http, ws.body.id, owner.token, viewer, 'viewer', inWs);
    const site = await w.http.post<{ id: string }>(
      '/api/vault/sites',
      { url: w.site.url },
      { token: owner.token, headers: inWs },
    );
    expect(site.status).toBe(201);
    const token = await w.http.post(
      `/api/vault/sites/${site.body.id}/token`,
      { token: w.site.issueApiToken('bob').token },
      { token: owner.token, headers: inWs },
    );
    expect(token.status).toBeLessThan(300);
    const agent = await w.http.post<{ id: string }>(
      '/api/agents',
      {
        name: 'Team scribe',
        systemPrompt: 'Write down what the run asks.',
        siteIds: [site.body.id],
        trigger: { type: 'manual' },
        approvals: { scopes: ['write'] },
      },
      { token: owner.token, headers: inWs },
    );
    expect(agent.status).toBe(201);
    team = { owner, viewer, workspaceId: ws.body.id, agentId: agent.body.id };
    // The busy user's short wait ends without a decision (60 s after it was asked), then its run completes.
    await eventually(
      'the run with no decision in time to complete',
      async () => {
        const run = await w.http.get<{ status: string }>(`/api/runs/${busy.expiredRunId}`, {
          token: busy.user.token,
        });
        return run.body.status === 'completed' ? true : undefined;
      },
      150_000,
    );
  }, 240_000);

  /** 22 agents whose write calls wait a day and one whose wait is a minute, a run each; one call approved. */
  async function startBusyUser(): Promise<{ user: TestUser; expiredRunId: string }> {
    const owner = await registerUserWith(w.http, w.admin, { tier: 'team', credits: 100_000 });
    const as = { token: owner.token };
    const siteId = await connectSite(w.http, as, w.site);
    const writes = (req: Parameters<typeof toolNamed>[0]) => ({
      toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Busy note', body: 'b' } }],
    });
    // Each run's first turn asks for a write; the approved run's and the expired run's second turns answer.
    w.model.script(...Array.from({ length: 23 }, () => writes), { text: 'Done.' }, { text: 'Done.' });
    const runIds: string[] = [];
    for (let i = 0; i < 23; i += 1) {
      const agent = await w.http.post<{ id: string }>(
        '/api/agents',
        {
          name: i === 22 ? 'Quick scribe' : `Busy scribe ${i}`,
          systemPrompt: 'Write down what the run asks.',
          siteIds: [siteId],
          trigger: { type: 'manual' },
          approvals: { scopes: ['write'], timeoutSeconds: i === 22 ? 60 : 86_400 },
        },
        as,
      );
      expect(agent.status).toBe(201);
      const run = await w.http.post<{ id: string }>(`/api/agents/${agent.body.id}/runs`, { input: 'Note it.' }, as);
      expect(run.status).toBe(201);
      runIds.push(run.body.id);
    }
    const pending = await eventually('23 calls waiting', async () => {
      const page = await w.http.get<{ items: Array<{ id: string; runId: string }> }>(
        '/api/approvals?status=pending&limit=50',
        as,
      );
      return page.body.items.length === 23 ? page.body.items : undefined;
    });
    const first = pending.find((a) => a.runId === runIds[0])!;
    const approved = await w.http.post(`/api/runs/${first.runId}/approvals/${first.id}`, { decision: 'approve' }, as);
    expect(approved.status).toBe(200);
    return { user: owner, expiredRunId: runIds[22]! };
  }

  afterAll(async () => {
    await w?.stop();
  });

  describe.each(WIDTHS)('at %i px wide', (width) => {
    it('a write waits: the navigation counts it, the inbox shows the call and approves it with a note, the run tells it and completes', async () => {
      const page = await w.newPage({ width });
      await signIn(page, user);
      const agentName = `Note writer ${width}`;

      // The agent's form: write calls wait (up to 2 h 30 min); notifications when a run fails.
      await page.goto('/agents/new');
      await page.getByLabel('Name').fill(agentName);
      await page.getByLabel('System prompt').fill('Write down what the run asks.');
      await page.getByRole('checkbox', { name: SITE_NAME, exact: true }).check();
      await fillPolicy(page, {
        scopes: [/^Calls that change data/],
        hours: 2,
        minutes: 30,
        notifyUrl: `${w.site.url}/hooks/agentsite`,
        events: ['A run failed'],
      });
      await expect(page.getByText('Without a decision within 2 hours 30 minutes').count()).resolves.toBe(1);
      await expectAccessible(page, `agent form with approvals and notifications (${width} px)`);
      await page.getByRole('button', { name: 'Create agent' }).click();
      await page.getByRole('heading', { name: agentName, level: 1 }).waitFor();
      const agentPath = new URL(page.url()).pathname;

      // The agent's page: the policy in words, the signing secret shown once, and its rotation.
      const policy = page.getByRole('region', { name: 'Approvals and notifications' });
      await expect(policy.textContent()).resolves.toContain(
        'before a call that changes data, at most 2 hours 30 minutes',
      );
      const secret = await policy.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      await expectAccessible(page, `agent with approvals and its signing secret (${width} px)`);
      if (width === WIDTHS[0]) {
        await screenshot(page, 'agent-approvals');
      }
      await policy.getByRole('button', { name: 'Rotate signing secret' }).click();
      const rotated = page.waitForResponse((r) => r.url().endsWith('/notify-secret/rotate'));
      await policy.getByRole('button', { name: 'Rotate now' }).click();
      expect((await rotated).status()).toBe(200);
      await page.waitForFunction(
        (old) =>
          (
            globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }
          ).document.querySelector('input.secret')?.value !== old,
        secret,
      );
      const newSecret = await policy.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(secret);

      // Run it: the model asks to write a note; the run waits for a decision before the call.
      w.model.script(
        (req) => ({
          text: 'Writing it down.',
          toolUses: [
            {
              name: toolNamed(req, 'create_note'),
              input: { title: `Groceries ${width}`, body: 'milk\neggs', tags: { aisle: 3 } },
            },
          ],
        }),
        { text: 'Noted your groceries.' },
      );
      const runId = await runNow(page, 'Note my groceries.');
      await page.goto(`/runs/${runId}`);
      const timeline = page.getByRole('list', { name: 'Timeline' });
      // The run's header: still active, and waiting for approval; the timeline says of what.
      const runStatus = page.getByRole('definition').getByRole('status');
      await runStatus.getByText('Waiting for approval').waitFor({ timeout: 30_000 });
      await expect(runStatus.textContent()).resolves.toBe('active Waiting for approval');
      await timeline.getByText(`Waiting for approval of create_note on ${SITE_NAME}`).waitFor();
      // Nothing was written while it waits.
      const titles = () => w.site.notesOf('alice').map((n) => n.title);
      expect(titles()).not.toContain(`Groceries ${width}`);
      await expectAccessible(page, `run waiting for approval (${width} px)`);

      // The navigation counts it.
      await waitForWaitingCount(page, 1);
      await navigateTo(page, 'Approvals (1 approval waiting)');
      await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();

      // The inbox: the call in words, its input readable.
      const item = inboxItem(page, 'create_note', SITE_NAME);
      await expect(item.textContent()).resolves.toContain(`${agentName} asks to make a call that changes data`);
      expect(await shownInput(item)).toEqual({
        title: `Groceries ${width}`,
        body: 'milk\neggs',
        tags: expect.stringContaining('"aisle": 3'),
      });
      await expect(item.locator('time').first().textContent()).resolves.toMatch(/ago|now|less than a minute/);
      await expect(item.locator('time').nth(1).textContent()).resolves.toMatch(/^in (2 hours|150 minutes)/);
      await expectAccessible(page, `approvals inbox (${width} px)`);
      if (width === WIDTHS[0]) {
        await screenshot(page, 'approvals-inbox');
      }
      await decide(item, CALL, 'Approve', 'Fine, it is only groceries.');
      await page
        .getByRole('status')
        .filter({ hasText: `Approved: ${agentName} makes the call ${CALL} and its run goes on.` })
        .waitFor();
      await item.waitFor({ state: 'detached' });
      await page.getByText('Nothing waits for a decision.').waitFor();
      await waitForWaitingCount(page, 0);

      // The run: the request and the decision in its timeline, the call made, and it completes.
      await page.goto(`/runs/${runId}`);
      await page.getByRole('heading', { name: 'Answer' }).waitFor({ timeout: 30_000 });
      const entries = await timeline.getByRole('listitem').allTextContents();
      const requested = entries.findIndex((e) => e.includes(`Waiting for approval of create_note on ${SITE_NAME}`));
      const decided = entries.findIndex((e) => e.includes(`Approved by ${user.email}`));
      const result = entries.findIndex((e) => e.includes('Tool result') && e.includes('create_note'));
      expect(requested).toBeGreaterThan(0);
      expect(decided).toBeGreaterThan(requested);
      expect(result).toBeGreaterThan(decided);
      expect(entries[requested]).toContain('a call that changes data');
      expect(entries[decided]).toContain('“Fine, it is only groceries.”');
      expect(titles()).toContain(`Groceries ${width}`);
      await expect(runStatus.textContent()).resolves.toBe('completed');
      await expectAccessible(page, `run with its approval (${width} px)`);
      if (width === WIDTHS[0]) {
        await screenshot(page, 'run-approved');
      }

      // Editing: the form shows the saved policy; unchecking it and emptying the address removes both.
      await page.goto(`${agentPath}/edit`);
      const approvals = page.getByRole('group', { name: 'Approvals' });
      const write = approvals.getByRole('checkbox', { name: /^Calls that change data/ });
      await expect(write.isChecked()).resolves.toBe(true);
      await expect(approvals.getByLabel('Wait for a decision: hours').inputValue()).resolves.toBe('2');
      await expect(approvals.getByLabel('and minutes').inputValue()).resolves.toBe('30');
      const notifications = page.getByRole('group', { name: 'Notifications' });
      await expect(notifications.getByLabel('Notification address').inputValue()).resolves.toBe(
        `${w.site.url}/hooks/agentsite`,
      );
      await expect(notifications.getByRole('checkbox', { name: 'A run failed' }).isChecked()).resolves.toBe(true);
      await expect(
        notifications.getByRole('checkbox', { name: 'A call waits for approval' }).isChecked(),
      ).resolves.toBe(false);
      await write.uncheck();
      await notifications.getByLabel('Notification address').fill('');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForURL(`**${agentPath}`);
      await expect(policy.textContent()).resolves.toContain('Waits for approvalnever');
      await expect(policy.textContent()).resolves.toContain('Notificationsnone');
      await expect(policy.getByRole('button', { name: 'Rotate signing secret' }).count()).resolves.toBe(0);
      await page.close();
      expect(w.pageErrors).toEqual([]);
    });

    it('a viewer sees what waits with the buttons off and why; the owner denies it inline on the run page, and the call is not made', async () => {
      const inWs = { 'x-workspace-id': team.workspaceId };
      const title = `Secret plans ${width}`;
      w.model.script(
        (req) => ({
          text: 'Writing it down.',
          toolUses: [{ name: toolNamed(req, 'create_note'), input: { title, body: 'x'.repeat(400) } }],
        }),
        { text: 'Understood: not written.' },
      );
      const started = await w.http.post<{ id: string }>(
        `/api/agents/${team.agentId}/runs`,
        { input: 'Note the plans.' },
        { token: team.owner.token, headers: inWs },
      );
      expect(started.status).toBe(201);
      const runId = started.body.id;
      await eventually('the approval is pending', async () => {
        const page = await w.http.get<{ items: Array<{ runId: string }> }>('/api/approvals?status=pending', {
          token: team.viewer.token,
          headers: inWs,
        });
        return page.body.items.some((a) => a.runId === runId) ? true : undefined;
      });

      // The viewer: the call in the inbox, its long value folded, the buttons off with the reason.
      const viewer = await w.newPage({ width });
      await signIn(viewer, { email: team.viewer.email, password: team.viewer.password });
      await openInWorkspace(viewer, team.workspaceId, '/approvals');
      const item = inboxItem(viewer, 'create_note', SITE_NAME);
      await expect(item.textContent()).resolves.toContain('Team scribe asks to make a call that changes data');
      await expect(item.getByText(/^x{60}… \(400 characters\)$/).count()).resolves.toBe(1);
      for (const decision of ['Approve', 'Deny']) {
        const button = item.getByRole('button', { name: `${decision} ${CALL}` });
        await expect(button.isDisabled()).resolves.toBe(true);
        await expect(button.getAttribute('aria-describedby')).resolves.toBeTruthy();
      }
      await expect(item.textContent()).resolves.toContain('You are a viewer in this workspace');
      await expectAccessible(viewer, `approvals inbox of a viewer (${width} px)`);
      await viewer.close();

      // The owner, on the run's page: Deny with a note, inline.
      const owner = await w.newPage({ width });
      await signIn(owner, { email: team.owner.email, password: team.owner.password });
      await openInWorkspace(owner, team.workspaceId, `/runs/${runId}`);
      const timeline = owner.getByRole('list', { name: 'Timeline' });
      await decide(timeline, CALL, 'Deny', 'Not today.');
      await owner.getByRole('heading', { name: 'Answer' }).waitFor({ timeout: 30_000 });
      const entries = await timeline.getByRole('listitem').allTextContents();
      const denied = entries.find((e) => e.includes(`Denied by ${team.owner.email}`));
      expect(denied).toContain(`Denied by ${team.owner.email}: the call was not made`);
      expect(denied).toContain('“Not today.”');
      await expect(timeline.getByRole('form').count()).resolves.toBe(0);
      expect(w.site.notesOf('bob').map((n) => n.title)).not.toContain(title);
      await expectAccessible(owner, `run with a denied call (${width} px)`);
      await owner.close();
      expect(w.pageErrors).toEqual([]);
    });

    it('more than a page waits: the count reads "20+"; the decided filter lists the approved call and the one with no decision in time, which the run tells in words', async () => {
      const page = await w.newPage({ width });
      await signIn(page, busy.user);
      await page.goto('/approvals');
      await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
      await waitForWaitingCount(page, 20, true);
      const badge = page.getByRole('banner').locator('.badge.count');
      await expect(badge.textContent()).resolves.toBe('20+');
      // The inbox: a page of 20 waiting calls, and pages behind it.
      // The banner's count comes from its own request: the inbox may render after it (CI saw 0 here).
      const waiting = page.getByRole('list', { name: 'Waiting for a decision' });
      await waiting.getByRole('article').nth(19).waitFor();
      await expect(waiting.getByRole('article').count()).resolves.toBe(20);
      await page.getByRole('navigation', { name: 'Approval pages' }).waitFor();
      await expect(page.getByRole('navigation', { name: 'Approval pages' }).count()).resolves.toBe(1);
      await expectAccessible(page, `approvals inbox with more than a page waiting (${width} px)`);

      // Decided ones: the call nobody decided in time, in words, without the buttons.
      const show = page.getByLabel('Show');
      await show.selectOption({ label: 'No decision in time' });
      const expired = page.getByRole('list', { name: 'No decision in time' }).getByRole('article');
      // The list takes the filter's name as soon as it is chosen, and its items once they are read.
      await eventually('the calls with no decision in time listed', async () =>
        (await expired.count()) === 1 && (await expired.locator('.badge').textContent()) === 'No decision in time'
          ? true
          : undefined,
      );
      await expect(expired.textContent()).resolves.toContain('Quick scribe asks to make a call that changes data');
      await expect(expired.locator('.badge').textContent()).resolves.toBe('No decision in time');
      await expect(expired.getByRole('button').count()).resolves.toBe(0);
      await expectAccessible(page, `approvals with no decision in time (${width} px)`);
      await show.selectOption({ label: 'Approved' });
      const approved = page.getByRole('list', { name: 'Approved' }).getByRole('article');
      await eventually('the approved calls listed', async () =>
        (await approved.count()) === 1 && (await approved.textContent())?.includes('Approved by') ? true : undefined,
      );
      await expect(approved.textContent()).resolves.toContain(`Approved by ${busy.user.email}`);
      await show.selectOption({ label: 'Denied' });
      await page.getByText('None.').waitFor();

      // The run whose call had no decision in time: its timeline says so, and that the call was not made.
      await expired.first().waitFor({ state: 'detached' });
      await page.goto(`/runs/${busy.expiredRunId}`);
      const timeline = page.getByRole('list', { name: 'Timeline' });
      await timeline.getByText('No decision in time').waitFor();
      const entries = await timeline.getByRole('listitem').allTextContents();
      expect(entries.find((e) => e.includes('No decision in time'))).toContain(
        'No decision in time: the call was not made',
      );
      // One note written: the approved call's; the call with no decision in time was not made.
      expect(w.site.notesOf('alice').filter((n) => n.title === 'Busy note')).toHaveLength(1);
      await expectAccessible(page, `run with no decision in time (${width} px)`);
      await page.close();
      expect(w.pageErrors).toEqual([]);
    });
  });
});
