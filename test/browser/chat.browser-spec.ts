import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { toolNamed } from '../fixtures/fake-model.js';
import { eventually } from '../utils/runs.js';
import { expectAccessible, screenshot, signUp, startConsoleWorld, tokenOf, type ConsoleWorld } from './harness.js';
import { chatWithStreaming, watchRunComplete } from './steps/chat.js';

describe('console: chat with streaming, earlier conversations, the run page', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  beforeEach(() => w.model.reset());

  afterAll(async () => {
    await w?.stop();
  });

  /** A signed-up user with the reference site in their vault and a bearer token for it (the vault's own pages are another suite's). */
  async function userWithSite(page: Page): Promise<{ token: string; siteId: string }> {
    await signUp(page);
    const token = await tokenOf(page);
    const me = (await w.http.get('/api/me', { token })).body;
    await w.http.patch(`/api/admin/users/${me.id}`, { tier: 'pro', credits: 100_000 }, { token: w.admin.token });
    const siteId = (await w.http.post('/api/vault/sites', { url: w.site.url }, { token })).body.id as string;
    await w.http.post(`/api/vault/sites/${siteId}/token`, { token: w.site.issueApiToken('alice').token }, { token });
    return { token, siteId };
  }

  it('streams an answer with its tool call, lists the conversation, reopens and deletes it', async () => {
    const page = await w.newPage();
    await userWithSite(page);
    w.site.createNote('alice', 'Groceries', 'milk and eggs');
    await page.goto('/chat');
    await page.getByRole('heading', { name: 'New conversation' }).waitFor();
    await expectAccessible(page, 'chat: new conversation');
    await screenshot(page, 'chat-new');

    const path = await chatWithStreaming(page, {
      model: w.model,
      siteName: 'Reference Notebook',
      tool: 'list_notes',
      message: 'What notes do I have?',
      before: 'Let me look at your notes.',
      after: 'There is one note, Groceries: milk and eggs.',
      title: 'My notes',
    });
    expect(path).toMatch(/^\/chat\/ses_/);
    await expectAccessible(page, 'chat: conversation');
    await screenshot(page, 'chat');

    // Shift+Enter is a new line, not a send.
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('first line');
    await box.press('Shift+Enter');
    await box.pressSequentially('second line');
    await expect(box.inputValue()).resolves.toBe('first line\nsecond line');
    const requests = w.model.requests.length;
    expect(requests).toBe(2);

    // A refused turn is shown where it happened, with its code; nothing is sent to the model.
    const me = (await w.http.get('/api/me', { token: await tokenOf(page) })).body;
    await w.http.patch(`/api/admin/users/${me.id}`, { credits: 0 }, { token: w.admin.token });
    await box.press('Enter');
    const refused = page.getByRole('alert').filter({ hasText: 'NO_CREDITS' });
    await refused.waitFor();
    await expect(box.inputValue()).resolves.toBe('first line\nsecond line');
    expect(w.model.requests.length).toBe(requests);

    // The conversation is listed (GET /api/sessions) and opens by its id with its messages.
    const listed = page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: 'My notes' });
    await listed.waitFor();
    await page.goto('/chat');
    await listed.click();
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
    const log = page.getByRole('log', { name: 'Messages' });
    await log.getByText('There is one note, Groceries: milk and eggs.').waitFor();
    await log.getByRole('listitem', { name: 'Tool call list_notes on Reference Notebook: ok' }).waitFor();

    await page.getByRole('button', { name: 'Delete conversation' }).click();
    await page.waitForURL((url) => url.pathname === '/chat');
    await page.getByText('No earlier conversations.').waitFor();
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });

  it('follows a run live on its page until it completes, and cancels another', async () => {
    const page = await w.newPage();
    const { token, siteId } = await userWithSite(page);
    const agent = (
      await w.http.post(
        '/api/agents',
        { name: 'Note reader', systemPrompt: 'You read notes.', siteIds: [siteId], trigger: { type: 'manual' } },
        { token },
      )
    ).body;
    // A slow first model turn: the page is open while the run is still going.
    w.model.script(
      (req) => ({ text: 'Reading.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }], delayMs: 3000 }),
      { text: 'You have no notes yet.', delayMs: 500 },
    );
    const run = (await w.http.post(`/api/agents/${agent.id}/runs`, { input: 'List my notes' }, { token })).body;
    const answer = watchRunComplete(page, run.id);
    await page.getByRole('button', { name: 'Cancel run' }).waitFor();
    await expect(answer).resolves.toContain('You have no notes yet.');
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await timeline.getByText('Tool call', { exact: true }).waitFor();
    await timeline.getByText('List my notes').waitFor();
    await expect(page.getByRole('link', { name: /^Back to the agent/ }).getAttribute('href')).resolves.toBe(
      `/agents/${agent.id}`,
    );
    await expectAccessible(page, 'run');
    await screenshot(page, 'run');

    // A run that waits on a stalled model: Cancel ends it; afterwards there is nothing to cancel.
    w.model.script({ stall: true });
    const stalled = (await w.http.post(`/api/agents/${agent.id}/runs`, { input: 'Wait' }, { token })).body;
    await page.goto(`/runs/${stalled.id}`);
    await eventually('the model was asked', async () =>
      w.model.requests.some((r) => JSON.stringify(r.body.messages).includes('Wait')) ? true : undefined,
    );
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('status').filter({ hasText: 'cancelled' }).waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).waitFor({ state: 'detached' });
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });
});
