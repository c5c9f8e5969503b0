import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { toolNamed } from '../fixtures/fake-model.js';
import { eventually } from '../utils/runs.js';
import {
  expectAccessible,
  screenshot,
  signUp,
  startConsoleWorld,
  tokenOf,
  WIDTHS,
  type ConsoleWorld,
} from './harness.js';
import { chatWithStreaming, lastReply, shownParts } from './steps/chat.js';

/**
 * A reply shows the same parts in the same order while it streams in and once the conversation is
 * opened again: the page builds both from one list of parts (issue 36, item 5).
 */
describe('console: a reloaded chat shows each turn as its stream did', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  beforeEach(() => w.model.reset());

  afterAll(async () => {
    await w?.stop();
  });

  describe.each(WIDTHS)('%i px wide', (width) => {
    it('"text, tool call, text" and a turn cut by the balance read the same live and reloaded', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      const token = await tokenOf(page);
      const me = (await w.http.get('/api/me', { token })).body;
      await w.http.patch(`/api/admin/users/${me.id}`, { tier: 'pro', credits: 100_000 }, { token: w.admin.token });
      const siteId = (await w.http.post('/api/vault/sites', { url: w.site.url }, { token })).body.id as string;
      await w.http.post(`/api/vault/sites/${siteId}/token`, { token: w.site.issueApiToken('alice').token }, { token });
      w.site.createNote('alice', `Parts ${width}`, 'milk and eggs');

      const before = 'Let me use a tool.';
      const after = 'All done: you have notes.';
      await chatWithStreaming(page, {
        model: w.model,
        siteName: 'Reference Notebook',
        tool: 'list_notes',
        message: 'What notes do I have?',
        before,
        after,
        title: `Parts at ${width}`,
      });
      const call = 'tool_call: Tool call list_notes on Reference Notebook: ok';
      const live = await shownParts(lastReply(page));
      expect(live).toEqual([`text: ${before}`, call, `text: ${after}`]);
      await expectAccessible(page, `chat: a streamed turn at ${width} px`);

      await page.reload();
      await lastReply(page).getByText(after).waitFor();
      expect(await shownParts(lastReply(page))).toEqual(live);
      await expectAccessible(page, `chat: the turn reloaded at ${width} px`);
      await screenshot(page, `chat-reloaded-${width}`);

      // A turn the balance ends after its tool call: what streamed is kept, and reads the same reloaded.
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      w.model.script(
        (req) => ({ text: 'Checking once more.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }], gate }),
        { text: 'Never asked: the balance is spent.' },
      );
      const box = page.getByRole('textbox', { name: 'Message', exact: true });
      await box.fill('Check again');
      await box.press('Enter');
      await eventually('the second turn reached the model', async () =>
        w.model.requests.length === 3 ? true : undefined,
      );
      await w.http.patch(`/api/admin/users/${me.id}`, { credits: 0 }, { token: w.admin.token });
      release();
      const cutNote = /^Cut short/;
      await lastReply(page).getByText(cutNote).waitFor();
      const cut = await shownParts(lastReply(page));
      expect(cut).toEqual(['text: Checking once more.', call]);
      expect(w.model.requests).toHaveLength(3);
      await expectAccessible(page, `chat: a cut turn at ${width} px`);

      await page.reload();
      await lastReply(page).getByText(cutNote).waitFor();
      expect(await shownParts(lastReply(page))).toEqual(cut);
      await expectAccessible(page, `chat: the cut turn reloaded at ${width} px`);
      expect(w.pageErrors).toEqual([]);
      await page.close();
    });
  });
});
