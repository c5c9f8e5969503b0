import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
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
 * A turn whose conversation was condensed for the model says so, quietly, in the reply (issue 40,
 * item 6): a small budget, and a tool answer larger than it.
 */
describe('console: a chat turn condensed to fit the model says so', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld({ env: { CHAT_CONTEXT_BUDGET_TOKENS: '6000' } });
  }, 120_000);

  beforeEach(() => w.model.reset());

  afterAll(async () => {
    await w?.stop();
  });

  describe.each(WIDTHS)('%i px wide', (width) => {
    it("a tool's answer larger than the budget: the reply shows the condensed line, the whole answer, and its parts", async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      const token = await tokenOf(page);
      const me = (await w.http.get('/api/me', { token })).body;
      await w.http.patch(`/api/admin/users/${me.id}`, { tier: 'pro', credits: 100_000 }, { token: w.admin.token });
      const siteId = (await w.http.post('/api/vault/sites', { url: w.site.url }, { token })).body.id as string;
      await w.http.post(`/api/vault/sites/${siteId}/token`, { token: w.site.issueApiToken('alice').token }, { token });
      w.site.createNote('alice', `Long ${width}`, 'l'.repeat(40_000));

      const before = 'Reading the note.';
      const after = 'The note is long.';
      await chatWithStreaming(page, {
        model: w.model,
        siteName: 'Reference Notebook',
        tool: 'list_notes',
        message: 'Read my long note',
        before,
        after,
        title: `Long note at ${width}`,
      });
      const reply = lastReply(page);
      await reply.getByText("Earlier messages were condensed to fit the model's context.").waitFor();
      // The model was sent the answer cut; the page shows its parts as ever.
      const sent = JSON.stringify(w.model.requests[1]!.body.messages);
      expect(sent).toContain('[cut to fit the model');
      expect(await shownParts(reply)).toEqual([
        `text: ${before}`,
        'tool_call: Tool call list_notes on Reference Notebook: ok',
        `text: ${after}`,
      ]);
      await expectAccessible(page, `chat: a condensed turn at ${width} px`);
      await screenshot(page, `chat-condensed-${width}`);
      expect(w.pageErrors).toEqual([]);
      await page.close();
    });
  });
});
