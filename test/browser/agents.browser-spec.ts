import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { expectAccessible, screenshot, signUp, startConsoleWorld, tokenOf, type ConsoleWorld } from './harness.js';
import {
  createCronAgent,
  createWebhookAgent,
  fireWebhook,
  nextFiringsShown,
  openRun,
  rotateWebhookSecret,
  runNow,
  runStatusShown,
  webhookShown,
  waitForRunShown,
} from './steps/agents.js';

describe('console: agents', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  /** A new user of the console on this tier (set through the admin API), with credits to run agents. */
  async function userOnTier(tier: 'free' | 'pro' | 'harness' | 'team'): Promise<Page> {
    const page = await w.newPage();
    await signUp(page);
    const token = await tokenOf(page);
    const me = await w.http.get<{ id: string }>('/api/me', { token });
    const patched = await w.http.patch(
      `/api/admin/users/${me.body.id}`,
      { tier, credits: 10_000 },
      { token: w.admin.token },
    );
    expect(patched.status).toBe(200);
    return page;
  }

  it('previews the next five firings as the cron expression is typed, explains a bad one, and creates the scheduled agent', async () => {
    const page = await userOnTier('pro');
    await page.goto('/agents/new');
    await page.getByRole('radio', { name: 'Schedule (cron)' }).check();
    const cron = page.getByLabel('Cron expression');
    await cron.fill('*/15 * *');
    await expect(cron.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByText('Must have 5 fields').textContent()).resolves.toContain('minute hour');
    expect(await nextFiringsShown(page)).toEqual([]);
    await cron.fill('30 6 * * *');
    await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
    await page.getByRole('list', { name: 'Next five firings' }).getByRole('listitem').nth(4).waitFor();
    const typed = await nextFiringsShown(page);
    // 06:30 in Tokyo, every day: the preview is written in the schedule's own time zone.
    expect(typed).toHaveLength(5);
    for (const firing of typed) {
      expect(firing).toMatch(/06:30 AM GMT\+9/);
    }
    await cron.fill('61 * * * *');
    await expect(cron.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByText(/Not a valid cron expression/).count()).resolves.toBe(1);
    await expectAccessible(page, 'new scheduled agent');

    const { agentId, firings } = await createCronAgent(page, {
      name: 'Morning digest',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
    });
    expect(firings.every((f) => /09:00 AM GMT\+[12]/.test(f))).toBe(true);
    // The agent's page: its schedule as Temporal has it, and the same five firings.
    await page.getByRole('heading', { name: 'Schedule' }).waitFor();
    expect(await page.getByRole('list', { name: 'Next five firings' }).getByRole('listitem').allTextContents()).toEqual(
      firings,
    );
    const schedule = await w.http.get<{ schedule: { nextRunAt: string } }>(`/api/agents/${agentId}`, {
      token: await tokenOf(page),
    });
    expect(new Date(schedule.body.schedule.nextRunAt).toISOString()).toBe(
      new Date(
        (await page
          .getByRole('list', { name: 'Next five firings' })
          .locator('time')
          .first()
          .getAttribute('datetime')) as string,
      ).toISOString(),
    );
    // Temporal's next firing, written like the preview: the console and the service agree.
    await expect(page.getByRole('region', { name: 'Schedule' }).textContent()).resolves.toContain(
      `Next firing (Temporal)${firings[0]}`,
    );
    await expectAccessible(page, 'scheduled agent');
    await screenshot(page, 'agent-scheduled');

    // The list: trigger and next firing.
    await page.getByRole('link', { name: 'All agents' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Morning digest' }) });
    await expect(row.getByRole('cell').nth(1).textContent()).resolves.toBe('Schedule: 0 9 * * 1-5 (Europe/Berlin)');
    await expect(row.getByRole('cell').nth(2).textContent()).resolves.toBe(firings[0]);
    await expectAccessible(page, 'agents list');
    await screenshot(page, 'agents');
    await page.close();
  });

  it('does not offer a webhook agent below the harness tier: the choice says the tier it needs', async () => {
    const page = await userOnTier('pro');
    await page.goto('/agents/new');
    const trigger = page.getByRole('group', { name: 'Trigger' });
    await trigger.getByText('Needs the Harness plan ($50.00 a month) or higher; you are on Pro.').waitFor();
    await expect(page.getByRole('radio', { name: 'Webhook' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('radio', { name: 'Schedule (cron)' }).isDisabled()).resolves.toBe(false);
    await expect(trigger.getByRole('link', { name: 'See the plans' }).count()).resolves.toBe(1);
    await page.close();
  });

  it('creates a webhook agent: schema checked while typing and by the API, the secret shown once, a fired webhook runs, rotation', async () => {
    const page = await userOnTier('harness');
    await page.goto('/agents/new');
    await page.getByLabel('Name').fill('Inbox triage');
    await page.getByLabel('System prompt').fill('Triage the ticket.');
    await page.getByRole('radio', { name: 'Webhook' }).check();
    const schema = page.getByLabel('Payload schema (JSON)');
    await schema.fill('[{"name": "ticket", "type": "string"');
    await expect(schema.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByText(/Not valid JSON/).count()).resolves.toBe(1);
    // Valid JSON the API refuses: its VALIDATION_ERROR names the row, under the editor (in words), and
    // the field's path is in the note's details for support only.
    await schema.fill('[{"name": "ticket", "type": "text"}]');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const note = page.locator('[data-code="VALIDATION_ERROR"]');
    await expect(note.locator('details').textContent()).resolves.toContain('trigger.schema[0].type');
    await expect(page.getByText(/^Field 1's type: must be one of string/).count()).resolves.toBe(1);
    await expectAccessible(page, 'new webhook agent');
    await screenshot(page, 'agent-new-webhook');

    const webhook = await createWebhookAgent(page, {
      name: 'Inbox triage 2',
      systemPrompt: 'Triage the ticket.',
      schema: [{ name: 'ticket', type: 'string', required: true }],
    });
    expect(webhook.url).toBe(`${w.stack.baseUrl}/api/webhooks/agent/${webhook.agentId}`);
    expect(webhook.secret).toMatch(/^whsec_/);
    await expect(page.getByText('you will not see it again').count()).resolves.toBe(1);
    await expectAccessible(page, 'webhook agent');
    await screenshot(page, 'agent-webhook');

    w.model.script({ text: 'Triaged: printer on fire.' });
    const fired = await fireWebhook(webhook, { ticket: 'Printer on fire' });
    expect([fired.status, fired.body.status]).toEqual([202, 'queued']);
    expect((await fireWebhook(webhook, { priority: 1 })).status).toBe(422);
    expect(await waitForRunShown(page, fired.body.runId, ['completed'])).toBe('completed');

    // Shown once: a reload (or coming back) does not show it again.
    await page.reload();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await expect(page.getByRole('textbox', { name: 'Webhook secret', exact: true }).count()).resolves.toBe(0);

    const rotated = await rotateWebhookSecret(page);
    expect(rotated).not.toBe(webhook.secret);
    const old = await fireWebhook(webhook, { ticket: 'again' });
    expect([old.status, old.body.code]).toEqual([401, 'WEBHOOK_SECRET_INVALID']);
    w.model.script({ text: 'Triaged again.' });
    const again = await fireWebhook({ url: webhook.url, secret: rotated }, { ticket: 'again' });
    expect(again.status).toBe(202);
    await openRun(page, again.body.runId);
    expect(new URL(page.url()).pathname).toBe(`/runs/${again.body.runId}`);
    await page.close();
  });

  it('runs now, shows AGENT_ALREADY_RUNNING, cancels the active run, and deletes the agent', async () => {
    const page = await userOnTier('free');
    await page.goto('/agents/new');
    await page.getByLabel('Name').fill('Slow thinker');
    await page.getByLabel('System prompt').fill('Think.');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Slow thinker', level: 1 }).waitFor();

    w.model.script({ text: 'thinking…', delayMs: 20_000 });
    const runId = await runNow(page, 'Think hard.');
    await waitForRunShown(page, runId, ['queued', 'active']);
    await page.getByRole('button', { name: 'Run now' }).click();
    const refusal = page.getByRole('region', { name: 'Run now' }).getByRole('alert');
    await expect(refusal.getAttribute('data-code')).resolves.toBe('AGENT_ALREADY_RUNNING');
    await waitForRunShown(page, runId, ['active']);
    await expectAccessible(page, 'agent with an active run');
    await screenshot(page, 'agent-running');
    await page.getByRole('button', { name: 'Cancel the active run' }).click();
    expect(await waitForRunShown(page, runId, ['cancelled'])).toBe('cancelled');
    await expect(page.getByRole('button', { name: /^Cancel the / }).count()).resolves.toBe(0);

    // The agent is free again; the run's link leads to its page.
    w.model.script({ text: 'Done.' });
    const second = await runNow(page);
    expect(await waitForRunShown(page, second, ['completed'])).toBe('completed');
    expect(await runStatusShown(page, runId)).toBe('cancelled');

    await page.getByRole('button', { name: 'Delete agent' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.waitForURL('**/agents');
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await page.getByText('No agents yet').waitFor();
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });

  it('moves one of the user’s own agents into a workspace, then acts in it', async () => {
    const page = await userOnTier('team');
    const token = await tokenOf(page);
    const workspace = await w.http.post<{ id: string }>('/api/workspaces', { name: 'Ops team' }, { token });
    expect(workspace.status).toBe(201);
    const agent = await w.http.post<{ id: string }>(
      '/api/agents',
      { name: 'Shared helper', systemPrompt: 'Help.', siteIds: [], trigger: { type: 'manual' } },
      { token },
    );
    expect(agent.status).toBe(201);
    await page.goto(`/agents/${agent.body.id}`);
    await page.getByLabel('Workspace', { exact: true }).selectOption(workspace.body.id);
    await page.getByRole('button', { name: 'Move agent' }).click();
    await page.getByRole('button', { name: 'Move it' }).click();
    // Acting in the workspace now: the agent is already shared there, so nothing more to move.
    await page.getByRole('heading', { name: 'Move to a workspace' }).waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'Shared helper', level: 1 }).waitFor();
    await expect(page.getByLabel('Acting in').inputValue()).resolves.toBe(workspace.body.id);
    const listed = await w.http.get<{ items: Array<{ id: string }> }>('/api/agents', {
      token,
      headers: { 'x-workspace-id': workspace.body.id },
    });
    expect(listed.body.items.map((a) => a.id)).toEqual([agent.body.id]);
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });

  it('edits every field of an agent; switching to a webhook shows a new secret once', async () => {
    const page = await userOnTier('harness');
    const token = await tokenOf(page);
    const site = await w.http.post<{ id: string; name: string }>('/api/vault/sites', { url: w.site.url }, { token });
    expect(site.status).toBe(201);
    await createCronAgent(page, { name: 'Reporter', cron: '0 7 * * *', timezone: 'UTC' });
    await page.getByRole('link', { name: 'Edit agent' }).click();
    await expect(page.getByLabel('Cron expression').inputValue()).resolves.toBe('0 7 * * *');
    await page.getByLabel('Name').fill('Weekly reporter');
    await page.getByLabel('System prompt').fill('Report weekly.');
    await page.getByLabel('Model').fill('claude-test-model');
    await page.getByRole('checkbox', { name: site.body.name, exact: true }).check();
    await page.getByLabel('Cron expression').fill('0 8 * * 1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Weekly reporter', level: 1 }).waitFor();
    const settings = page.getByRole('region', { name: 'Settings' });
    await expect(settings.textContent()).resolves.toContain('claude-test-model');
    // The link is named once the vault's list has loaded (until then it shows the site's id).
    await settings.getByRole('link', { name: site.body.name }).waitFor();
    await expect(settings.getByRole('link', { name: site.body.name }).count()).resolves.toBe(1);
    await expect(page.getByRole('region', { name: 'Schedule' }).textContent()).resolves.toContain('0 8 * * 1');

    await page.getByRole('link', { name: 'Edit agent' }).click();
    await page.getByLabel('Model').fill('');
    await page.getByRole('radio', { name: 'Webhook' }).check();
    await page.getByLabel('Payload schema (JSON)').fill('[]');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const { url, secret } = await webhookShown(page);
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByRole('region', { name: 'Schedule' }).count()).resolves.toBe(0);
    w.model.script({ text: 'Reported.' });
    const fired = await fireWebhook({ url, secret }, { anything: true });
    expect(fired.status).toBe(202);
    expect(await waitForRunShown(page, fired.body.runId, ['completed'])).toBe('completed');
    const agent = await w.http.get<{ model: string; trigger: { type: string } }>(
      `/api/agents/${new URL(page.url()).pathname.split('/').pop()}`,
      { token },
    );
    // An emptied model goes back to the service's default.
    expect(agent.body.model).not.toBe('claude-test-model');
    expect(agent.body.trigger.type).toBe('webhook');
    await page.close();
  });

  it('says the agent limit is reached before the form is filled, and NO_CREDITS on Run now', async () => {
    const page = await userOnTier('free');
    const token = await tokenOf(page);
    const ids: string[] = [];
    for (const name of ['One', 'Two', 'Three']) {
      const made = await w.http.post<{ id: string }>(
        '/api/agents',
        { name, systemPrompt: 'x', siteIds: [], trigger: { type: 'manual' } },
        { token },
      );
      expect(made.status).toBe(201);
      ids.push(made.body.id);
    }
    await page.goto('/agents/new');
    await page
      .getByRole('note')
      .filter({ hasText: 'You have 3 agents, all that your Free plan allows.' })
      .filter({ hasText: 'The Pro plan ($20.00 a month) allows 10' })
      .waitFor();
    await expect(page.getByRole('button', { name: 'Create agent' }).isDisabled()).resolves.toBe(true);

    const me = await w.http.get<{ id: string }>('/api/me', { token });
    await w.http.patch(`/api/admin/users/${me.body.id}`, { credits: 0 }, { token: w.admin.token });
    await page.goto(`/agents/${ids[0]}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    const refusal = page.getByRole('region', { name: 'Run now' }).getByRole('alert');
    await expect(refusal.getAttribute('data-code')).resolves.toBe('NO_CREDITS');
    await expect(page.getByRole('link', { name: 'Buy credits' }).count()).resolves.toBe(1);
    await page.close();
  });
});
