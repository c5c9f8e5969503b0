/**
 * The Chat area's and the run page's steps, for chat.browser-spec.ts and the end-to-end
 * scenario. They drive the console through accessible names only (roles and labels).
 */
import { expect } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import { type FakeModel, toolNamed } from '../../fixtures/fake-model.js';
import { eventually } from '../../utils/runs.js';

export interface ChatWithStreaming {
  /** The scripted model the service talks to (the world's). */
  model: FakeModel;
  /** The vault site to chat with, by its name (the reference site: "Reference Notebook"). */
  siteName: string;
  /** The site's tool the model calls (e.g. list_notes) with `toolInput`. */
  tool: string;
  toolInput?: Record<string, unknown>;
  /** What the user types, and the model's text before and after the tool call. */
  message: string;
  before: string;
  after: string;
  /** Conversation title (also how it is found in the list of conversations). */
  title?: string;
}

/**
 * Starts a conversation over `siteName` on /chat, sends `message` with Enter, and checks that the
 * answer streams in: the text is on the page while the turn is still going, the tool call shows with
 * its result, then the whole text and the usage. Answers the conversation's address (/chat/:token).
 */
export async function chatWithStreaming(page: Page, options: ChatWithStreaming): Promise<string> {
  const { model, siteName, tool, message, before, after } = options;
  const title = options.title ?? `Chat ${Date.now()}`;
  await page.goto('/chat');
  await page.getByRole('heading', { name: 'New conversation' }).waitFor();
  await page.getByLabel('Title (optional)').fill(title);
  await page.getByRole('checkbox', { name: `Use ${siteName}` }).check();
  await page.getByRole('button', { name: 'Start conversation' }).click();
  await page.waitForURL(/\/chat\/ses_/);
  await page.getByRole('heading', { name: title }).waitFor();

  // Slow chunks: the first words must show while the model is still sending the rest.
  model.script(
    (req) => ({ text: before, toolUses: [{ name: toolNamed(req, tool), input: options.toolInput ?? {} }] }),
    { text: after, chunkDelayMs: 120 },
  );
  const box = page.getByRole('textbox', { name: 'Message', exact: true });
  await box.fill(message);
  await box.press('Enter');

  const log = page.getByRole('log', { name: 'Messages' });
  await expect(log.getAttribute('aria-live')).resolves.toBe('polite');
  await log.getByText(message).waitFor();
  // The tool call and its result, as they happen.
  const call = log.getByRole('listitem', { name: `Tool call ${tool} on ${siteName}: ok` });
  await call.waitFor();
  // Streaming: the answer's first piece (the model sends 8 characters at a time) is on the page
  // while the rest is still coming and the turn still runs (its Stop button is there).
  const firstPiece = after.slice(0, 8);
  const partial = await eventually('the first piece of the answer', async () => {
    const shown = (await log.textContent()) ?? '';
    return shown.includes(firstPiece) ? shown : undefined;
  });
  const stillRunning = await page.getByRole('button', { name: 'Stop' }).isVisible();
  expect({ stillRunning, whole: partial.includes(after) }).toEqual({ stillRunning: true, whole: false });
  await log.getByText(before).waitFor();
  await log.getByText(after).waitFor();
  await log.getByText(/^Usage: \d+ input tokens, \d+ output tokens, \d+ credits$/).waitFor();
  await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
  // The result is there (folded under "Result"): the site's answer to the call.
  await call.getByText('Result', { exact: true }).waitFor();
  await expect(call.textContent()).resolves.toMatch(/"results"/);
  return new URL(page.url()).pathname;
}

/** What shownParts reads of an element in the page (the suites compile without the DOM's types). */
interface ShownElement {
  children: ArrayLike<ShownElement>;
  classList: { contains(name: string): boolean };
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<ShownElement>;
}

/** The conversation's last reply (the last message headed "Assistant"). */
export function lastReply(page: Page): Locator {
  return page
    .getByRole('log', { name: 'Messages' })
    .getByRole('article')
    .filter({ has: page.getByRole('heading', { name: 'Assistant' }) })
    .last();
}

/**
 * The parts a reply shows, in the order the page shows them: `text: <its text>` for a text and
 * `tool_call: <its accessible name>` for a tool call ("Tool call list_notes on Reference Notebook: ok").
 */
export async function shownParts(reply: Locator): Promise<string[]> {
  return reply.evaluate((article: ShownElement) =>
    Array.from(article.children).flatMap((child) => {
      if (child.classList.contains('content')) {
        return [`text: ${child.textContent ?? ''}`];
      }
      if (child.classList.contains('tool-calls')) {
        return Array.from(child.querySelectorAll('li')).map(
          (li) => `tool_call: ${li.getAttribute('aria-label') ?? ''}`,
        );
      }
      return [];
    }),
  );
}

/**
 * Opens /runs/:runId and watches its timeline until the run completed, without reloading the page:
 * the page polls while the run is queued or active. Answers the final answer's text.
 */
export async function watchRunComplete(page: Page, runId: string): Promise<string> {
  await page.goto(`/runs/${runId}`);
  await page.getByRole('heading', { name: `Run ${runId.slice(0, 8)}` }).waitFor();
  const timeline = page.getByRole('list', { name: 'Timeline' });
  await timeline.getByText('Triggered', { exact: true }).waitFor();
  await page.getByRole('status').filter({ hasText: 'completed' }).waitFor({ timeout: 60_000 });
  await timeline.getByText('Completed', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Cancel run' }).waitFor({ state: 'detached' });
  return (await page.getByRole('region', { name: 'Answer' }).textContent())?.replace(/^Answer/, '') ?? '';
}
