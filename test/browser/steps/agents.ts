/**
 * The Agents area's steps, for the agents browser spec and the end-to-end scenario: each
 * drives the console by the accessible names a user (or a screen reader) finds, and returns what
 * the console showed.
 */
import { expect } from '@jest/globals';
import type { Page } from 'playwright-core';

export interface AgentBasics {
  name: string;
  systemPrompt?: string;
  /** Names of vault sites to give the agent (as listed in the form). */
  sites?: string[];
  model?: string;
}

/** Fills what every agent has, on /agents/new (opened here). */
async function startNewAgent(page: Page, agent: AgentBasics): Promise<void> {
  await page.goto('/agents');
  await page.getByRole('link', { name: 'New agent' }).click();
  await page.getByRole('heading', { name: 'New agent' }).waitFor();
  await page.getByLabel('Name').fill(agent.name);
  await page.getByLabel('System prompt').fill(agent.systemPrompt ?? 'Do what the run asks.');
  if (agent.model !== undefined) {
    await page.getByLabel('Model').fill(agent.model);
  }
  for (const site of agent.sites ?? []) {
    await page.getByRole('checkbox', { name: site, exact: true }).check();
  }
}

/** Saves the form and waits for the agent's page; returns the agent's id. */
async function save(page: Page, name: string): Promise<string> {
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
  await page.getByRole('heading', { name, exact: true, level: 1 }).waitFor();
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** The firings the form's live preview lists (empty while the expression is invalid). */
export async function nextFiringsShown(page: Page): Promise<string[]> {
  return page.getByRole('list', { name: 'Next five firings' }).getByRole('listitem').allTextContents();
}

export interface CronAgent {
  agentId: string;
  /** The five firings the form showed before saving. */
  firings: string[];
}

/** Creates a scheduled agent; asserts the form showed the next five firings before saving. */
export async function createCronAgent(
  page: Page,
  agent: AgentBasics & { cron: string; timezone: string },
): Promise<CronAgent> {
  await startNewAgent(page, agent);
  await page.getByRole('radio', { name: 'Schedule (cron)' }).check();
  await page.getByLabel('Cron expression').fill(agent.cron);
  await page.getByLabel('Time zone').selectOption(agent.timezone);
  await page.getByRole('list', { name: 'Next five firings' }).getByRole('listitem').nth(4).waitFor();
  const firings = await nextFiringsShown(page);
  expect(firings).toHaveLength(5);
  return { agentId: await save(page, agent.name), firings };
}

export interface WebhookAgent {
  agentId: string;
  /** As shown on the agent's page. */
  url: string;
  /** As shown on the agent's page, once, right after creation. */
  secret: string;
}

/** Creates a webhook agent and reads its URL and its secret off the agent's page. */
export async function createWebhookAgent(
  page: Page,
  agent: AgentBasics & { schema?: unknown[]; allowActionOverride?: boolean },
): Promise<WebhookAgent> {
  await startNewAgent(page, agent);
  await page.getByRole('radio', { name: 'Webhook' }).check();
  await page.getByLabel('Payload schema (JSON)').fill(JSON.stringify(agent.schema ?? [], null, 2));
  if (agent.allowActionOverride === true) {
    await page.getByLabel('Allow action override from webhook').check();
  }
  const agentId = await save(page, agent.name);
  return { agentId, ...(await webhookShown(page)) };
}

/** The webhook URL and the secret (while it is shown) on the agent's page. */
export async function webhookShown(page: Page): Promise<{ url: string; secret: string }> {
  const secret = page.getByRole('textbox', { name: 'Webhook secret', exact: true });
  await secret.waitFor();
  return {
    url: await page.getByRole('textbox', { name: 'Webhook URL', exact: true }).inputValue(),
    secret: await secret.inputValue(),
  };
}

/** Rotates the webhook secret on the agent's page (confirming) and returns the new one, as shown. */
export async function rotateWebhookSecret(page: Page): Promise<string> {
  const shown = page.getByRole('textbox', { name: 'Webhook secret', exact: true });
  const before = (await shown.count()) > 0 ? await shown.inputValue() : '';
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await page.getByRole('button', { name: 'Rotate now' }).click();
  await page.waitForFunction((old) => {
    const field = (
      globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }
    ).document.querySelector('input.secret');
    return field !== null && field.value !== '' && field.value !== old;
  }, before);
  return shown.inputValue();
}

/** Fires the webhook as a sender would (Node's fetch, the secret in X-Webhook-Secret); returns the answer. */
export async function fireWebhook(
  webhook: { url: string; secret: string },
  payload: unknown,
): Promise<{ status: number; body: any }> {
  const answer = await fetch(webhook.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-secret': webhook.secret },
    body: JSON.stringify(payload),
  });
  return { status: answer.status, body: await answer.json().catch(() => undefined) };
}

/** Presses Run now on the agent's page (with an optional input); returns the new run's id. */
export async function runNow(page: Page, input?: string): Promise<string> {
  if (input !== undefined) {
    await page.getByLabel('Input (optional)').fill(input);
  }
  const link = page.getByRole('status').getByRole('link', { name: 'follow it on its page' });
  // A run started earlier on this page is linked there until the new one replaces it.
  const before = (await link.count()) > 0 ? await link.getAttribute('href') : null;
  await page.getByRole('button', { name: 'Run now' }).click();
  await page.waitForFunction((old) => {
    const anchors = (
      globalThis as unknown as {
        document: {
          querySelectorAll(s: string): Iterable<{ textContent: string | null; getAttribute(n: string): string | null }>;
        };
      }
    ).document.querySelectorAll('a');
    return [...anchors].some((a) => a.textContent === 'follow it on its page' && a.getAttribute('href') !== old);
  }, before);
  return (await link.getAttribute('href'))!.split('/').pop()!;
}

function runRow(page: Page, runId: string) {
  return page
    .getByRole('row')
    .filter({ has: page.getByRole('link', { name: `Run ${runId.slice(0, 8)}`, exact: true }) });
}

/** The status shown for a run in the agent's runs list, once it is listed. */
export async function runStatusShown(page: Page, runId: string): Promise<string> {
  const row = runRow(page, runId);
  await row.waitFor();
  return (await row.getByRole('cell').nth(1).textContent())!.trim();
}

/**
 * Waits until the runs list shows the run with one of these statuses: the list refreshes itself
 * while a run goes on; a run that started elsewhere (a webhook) is fetched with Refresh runs.
 */
export async function waitForRunShown(
  page: Page,
  runId: string,
  statuses: string[],
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let status = '(not listed)';
  while (Date.now() < deadline) {
    const row = runRow(page, runId);
    if ((await row.count()) === 0) {
      const refresh = page.getByRole('button', { name: 'Refresh runs' });
      if (await refresh.isEnabled()) {
        await refresh.click();
      }
    } else {
      status = (await row.getByRole('cell').nth(1).textContent())!.trim();
      if (statuses.some((s) => status.startsWith(s))) {
        return status;
      }
    }
    await page.waitForTimeout(200);
  }
  throw new Error(`run ${runId} shown as "${status}", not ${statuses.join('/')}, after ${timeoutMs} ms`);
}

/**
 * Opens a run of the agent from its runs list (refreshed first: a webhook's run may be newer than
 * the list), e.g. the run whose id the webhook's answer gave.
 */
export async function openRun(page: Page, runId: string): Promise<void> {
  await page.getByRole('button', { name: 'Refresh runs' }).click();
  await page.getByRole('link', { name: `Run ${runId.slice(0, 8)}`, exact: true }).click();
  await page.waitForURL(`**/runs/${runId}`);
}

/** The webhook deliveries the agent's page lists, once at least `count` are shown (refreshing the list meanwhile). */
export async function webhookDeliveriesShown(page: Page, count: number): Promise<string[]> {
  const list = page.getByRole('list', { name: 'Recent deliveries' });
  for (let tries = 0; ; tries += 1) {
    const shown = await list.getByRole('listitem').allInnerTexts();
    if (shown.length >= count || tries >= 50) {
      return shown;
    }
    // The list shows what the API has: an accepted delivery is recorded just after its answer.
    await page.getByRole('button', { name: 'Refresh deliveries' }).click();
    await page.waitForTimeout(200);
  }
}
