/** Steps about how the console shows a refusal: plain words, beside the field, support details. */
import { expect } from '@jest/globals';
import type { Locator, Page, Response } from 'playwright-core';

/** What a person must not read: the API's codes, paths, DTO field names and validator phrasing. */
const CODE = /\b[A-Z]+_[A-Z_]+\b/g;
const DTO_NAMES = /\b(systemPrompt|siteIds|paymentMethodToken|expiresAt|userId|trigger\.[a-z]+|schema\[\d+\])/g;
const VALIDATOR = /must be (longer|shorter) than or equal|must be an? (URL|UUID|string)|should not (exist|be empty)/;

/** The visible text of `where` (folded support details are not visible) holds no API language. */
export async function expectPlainWords(where: Locator, what: string): Promise<void> {
  const text = await where.innerText();
  expect({
    what,
    codes: text.match(CODE) ?? [],
    apiPaths: text.includes('/api/'),
    dtoNames: text.match(DTO_NAMES) ?? [],
    validator: text.match(VALIDATOR)?.[0] ?? null,
  }).toEqual({ what, codes: [], apiPaths: false, dtoNames: [], validator: null });
}

/**
 * The error shown beside the control labelled `label`: the control is marked invalid, its
 * aria-describedby names the error, and the error is inside the control's own field.
 */
export async function fieldErrorOf(page: Page, label: string | RegExp): Promise<string> {
  const control = page.getByLabel(label, { exact: typeof label === 'string' });
  await expect(control.getAttribute('aria-invalid')).resolves.toBe('true');
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id !== '');
  for (const id of ids) {
    const described = page.locator(`[id="${id}"]`);
    if ((await described.getAttribute('class'))?.split(' ').includes('field-error') === true) {
      const field = control.locator('xpath=ancestor::*[contains(concat(" ", @class, " "), " field ")][1]');
      await expect(field.locator(`[id="${id}"]`).count()).resolves.toBe(1);
      return (await described.innerText()).trim();
    }
  }
  throw new Error(`no error describes the control labelled ${String(label)} (aria-describedby="${ids.join(' ')}")`);
}

/** How many times `text` is seen on the page. */
export async function timesShown(page: Page, text: string): Promise<number> {
  return (await page.locator('body').innerText()).split(text).length - 1;
}

/** The request id the API answered with (X-Request-Id). */
export function requestIdOf(response: Response): string {
  const id = response.headers()['x-request-id'];
  if (id === undefined || id === '') {
    throw new Error(`${response.url()} answered without X-Request-Id`);
  }
  return id;
}

/** Opens the alert's "Details for support", reads what they say, and folds them again. */
export async function supportDetails(alert: Locator): Promise<string> {
  const summary = alert.getByText('Details for support');
  const details = alert.locator('details');
  await summary.click();
  await expect(details.getAttribute('open')).resolves.toBe('');
  const text = await details.innerText();
  await summary.click();
  await expect(details.getAttribute('open')).resolves.toBeNull();
  return text;
}

/** Chooses a radio button (a tap on a phone, a click on a laptop). */
export async function choose(radio: Locator): Promise<void> {
  await radio.check();
  await expect(radio.isChecked()).resolves.toBe(true);
}

/** Waits for the API's answer to `method path` while `act` runs. */
export async function answerTo(page: Page, method: string, path: string, act: () => Promise<void>): Promise<Response> {
  const answered = page.waitForResponse((r) => r.request().method() === method && new URL(r.url()).pathname === path);
  await act();
  return answered;
}
