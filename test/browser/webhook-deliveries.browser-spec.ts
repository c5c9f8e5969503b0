import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectAccessible,
  screenshot,
  signUp,
  startConsoleWorld,
  tokenOf,
  WIDTHS,
  type ConsoleWorld,
} from './harness.js';
import { fireWebhook, webhookDeliveriesShown } from './steps/agents.js';

describe('console: an agent page lists its webhook deliveries (#36, item 12)', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  it.each(WIDTHS)('shows a refused 401 and 422 and an accepted delivery, in words, at %i px wide', async (width) => {
    const page = await w.newPage({ width });
    await signUp(page);
    const token = await tokenOf(page);
    const me = await w.http.get<{ id: string }>('/api/me', { token });
    await w.http.patch(
      `/api/admin/users/${me.body.id}`,
      { tier: 'harness', credits: 10_000 },
      { token: w.admin.token },
    );
    // Made through the API: the form is the agents spec's; this is about the agent's page.
    const created = await w.http.post<{ id: string; webhookUrl: string; webhookSecret: string }>(
      '/api/agents',
      {
        name: `Ticket triage ${width}`,
        systemPrompt: 'Triage the ticket.',
        siteIds: [],
        trigger: { type: 'webhook', schema: [{ name: 'ticket', type: 'string', required: true }] },
      },
      { token },
    );
    expect(created.status).toBe(201);
    const webhook = { url: created.body.webhookUrl, secret: created.body.webhookSecret };
    await page.goto(`/agents/${created.body.id}`);
    await page.getByText('No deliveries yet.').waitFor();
    await expectAccessible(page, `webhook agent without deliveries at ${width} px`);

    expect((await fireWebhook({ ...webhook, secret: 'whsec_not-the-secret' }, { ticket: 'a' })).status).toBe(401);
    expect((await fireWebhook(webhook, { priority: 1 })).status).toBe(422);
    const accepted = await fireWebhook(webhook, { ticket: 'Printer on fire' });
    expect(accepted.status).toBe(202);

    const shown = await webhookDeliveriesShown(page, 3);
    expect(shown).toHaveLength(3);
    expect(shown[0]).toContain('Accepted: a run was queued');
    expect(shown[0]).toContain('status 202');
    expect(shown[0]).toContain(`Run ${(accepted.body.runId as string).slice(0, 8)}`);
    expect(shown[1]).toContain('Refused: the payload did not fit');
    expect(shown[1]).toContain('Fields at fault: ticket');
    expect(shown[1]).toContain('status 422');
    expect(shown[2]).toContain('Refused: the secret was missing or wrong');
    expect(shown[2]).toContain('status 401');
    for (const item of shown) {
      expect(item).toMatch(/Request id \S{8,}/);
      // Words, not the API's codes.
      expect(item).not.toMatch(/WEBHOOK_|_INVALID/);
    }
    // The list, and the whole webhook card, fit at this width: nothing in them runs off to the side.
    const list = page.getByRole('list', { name: 'Recent deliveries' });
    expect(await list.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    const card = page.getByRole('region', { name: 'Webhook' });
    expect(await card.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    await expect(page.getByRole('list', { name: 'Payload fields' }).innerText()).resolves.toBe(
      'ticket: string, required',
    );
    await list.scrollIntoViewIfNeeded();
    await expectAccessible(page, `webhook deliveries at ${width} px`);
    await screenshot(page, width === WIDTHS[0] ? 'agent-webhook-deliveries' : `agent-webhook-deliveries-${width}`);

    await list.getByRole('link', { name: `Run ${(accepted.body.runId as string).slice(0, 8)}` }).click();
    await page.waitForURL(`**/runs/${accepted.body.runId as string}`);
    expect(w.pageErrors).toEqual([]);
  });
});
