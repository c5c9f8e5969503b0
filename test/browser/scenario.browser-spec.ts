import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toolNamed } from '../fixtures/fake-model.js';
import { registerUser } from '../utils/users.js';
import { expectAccessible, screenshot, signUp, startConsoleWorld, type ConsoleWorld } from './harness.js';
import { buyCredits, inviteMember, setTierByApi } from './steps/billing.js';
import { chatWithStreaming, watchRunComplete } from './steps/chat.js';
import { createWebhookAgent, fireWebhook } from './steps/agents.js';
import { addSite, allowServiceCallback, connectSiteByOAuth, openSite, tryTool } from './steps/vault.js';

const SITE_NAME = 'Reference Notebook';

/**
 * The one scenario, end to end in a real browser against the real service, reference site
 * (its own OAuth consent page) and scripted model: what a new user does on their first day.
 */
describe('console: a new user’s first day, end to end', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
    allowServiceCallback(w.site, w.stack);
  });

  afterAll(async () => {
    await w?.stop();
  });

  it('signs up, connects the site by OAuth, tries a tool, chats, runs a webhook agent, buys credits and invites a member', async () => {
    const page = await w.newPage();

    // Sign up (and the terms step).
    await signUp(page);

    // Add the reference site and connect it by OAuth through the site's own consent page.
    await addSite(page, w.site.url);
    const scopes = await connectSiteByOAuth(page, SITE_NAME);
    expect(scopes).toEqual(expect.arrayContaining(['read', 'write']));

    // Try a tool: the note is really created at the site with the stored credential.
    await openSite(page, SITE_NAME);
    const created = await tryTool(page, 'create_note', { title: 'First day', body: 'connected from the console' });
    expect(created).toMatchObject({ ok: true, result: { title: 'First day' } });

    // Chat: the answer streams in, with the tool call and its result as they happen.
    await chatWithStreaming(page, {
      model: w.model,
      siteName: SITE_NAME,
      tool: 'search_notes',
      toolInput: { query: 'First day' },
      message: 'What did I write on my first day?',
      before: 'Let me search your notes.',
      after: 'You wrote “connected from the console” on your first day.',
      title: 'First day notes',
    });

    // A webhook agent (webhooks need tier harness; the Team plan below needs team: the admin sets it).
    await setTierByApi(w, page, 'team');
    const agent = await createWebhookAgent(page, {
      name: 'New ticket reader',
      systemPrompt: 'Read the ticket and look it up in the notes.',
      sites: [SITE_NAME],
      schema: [{ name: 'ticket', type: 'string', required: true }],
    });
    w.model.script(
      (req) => ({ text: 'Looking it up.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }),
      { text: 'Ticket read: one note matches.' },
    );
    const fired = await fireWebhook(agent, { ticket: 'Where is my first-day note?' });
    expect([fired.status, fired.body.status]).toEqual([202, 'queued']);
    // Its run's timeline, live until it completes.
    const answer = await watchRunComplete(page, fired.body.runId);
    expect(answer).toContain('Ticket read: one note matches.');
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await timeline.getByText('Tool result', { exact: false }).first().waitFor();
    await expectAccessible(page, 'run');
    await screenshot(page, 'scenario-run');

    // Buy credits (a payment method first).
    await buyCredits(page, 500);
    await expectAccessible(page, 'plan and credits');

    // Invite a member to a Team workspace.
    const colleague = await registerUser(w.http);
    await inviteMember(page, 'First team', colleague.email, 'member');
    await expectAccessible(page, 'workspace');
    await screenshot(page, 'scenario-workspace');

    await page.close();
    expect(w.pageErrors).toEqual([]);
  });
});
