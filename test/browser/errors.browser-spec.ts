import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { expectAccessible, screenshot, signUp, startConsoleWorld, WIDTHS, type ConsoleWorld } from './harness.js';
import { openBilling, setTierByApi } from './steps/billing.js';
import {
  answerTo,
  choose,
  expectPlainWords,
  fieldErrorOf,
  requestIdOf,
  supportDetails,
  timesShown,
} from './steps/errors.js';

/** Issue #36, item 9 (and "not a url" of item 8): refusals in words a person understands, at each width. */
describe('console: errors in words a person understands', () => {
  let w: ConsoleWorld;

  beforeAll(async () => {
    w = await startConsoleWorld();
  });

  afterAll(async () => {
    await w?.stop();
  });

  describe.each(WIDTHS)('%i px wide', (width) => {
    async function newUser(): Promise<Page> {
      const page = await w.newPage({ width });
      await signUp(page);
      return page;
    }

    it('the agent form: empty name and instructions and a bad payload schema row, each beside its field, once', async () => {
      const page = await newUser();
      // Webhook agents need the harness tier; below it the form does not offer them (plans spec).
      await setTierByApi(w, page, 'harness');
      await page.goto('/agents/new');
      await choose(page.getByRole('radio', { name: 'Webhook' }));
      await page.getByLabel('Payload schema (JSON)').fill('[{"name": "ticket", "type": "text"}]');
      const answer = await answerTo(page, 'POST', '/api/agents', () =>
        page.getByRole('button', { name: 'Create agent' }).click(),
      );
      const alert = page.locator('[role="alert"][data-code="VALIDATION_ERROR"]');
      await alert.waitFor();

      await expect(fieldErrorOf(page, 'Name')).resolves.toBe("Can't be empty.");
      await expect(fieldErrorOf(page, 'System prompt')).resolves.toBe("Can't be empty.");
      const schemaError = await fieldErrorOf(page, 'Payload schema (JSON)');
      expect(schemaError).toMatch(/^Field 1's type: must be one of string, number, integer, boolean, object, array\.$/);
      // Each field's problem is shown beside it and not again in the note.
      await expect(timesShown(page, schemaError)).resolves.toBe(1);
      await expect(timesShown(page, "Can't be empty.")).resolves.toBe(2);
      const note = await alert.innerText();
      expect(note).not.toMatch(/Field 1|empty/);
      expect(note).toContain('Could not save the agent. Some of what you entered needs a change.');
      await expect(timesShown(page, 'Some of what you entered needs a change.')).resolves.toBe(1);
      await expectPlainWords(page.locator('body'), 'agent form refused');
      await expectAccessible(page, `agent form refused (${width} px)`);
      await screenshot(page, `errors-agent-form-${width}`);

      const details = await supportDetails(alert);
      expect(details).toContain('VALIDATION_ERROR');
      expect(details).toContain(requestIdOf(answer));
      expect(details).toContain('trigger.schema[0].type');
      await alert.getByText('Details for support').click();
      await expectAccessible(page, `agent form refused, support details open (${width} px)`);
      await page.close();
    });

    it('a trigger the plan no longer includes at save: a sentence in its place, the code and request id in the details', async () => {
      const page = await newUser();
      await setTierByApi(w, page, 'harness');
      await page.goto('/agents/new');
      await page.getByLabel('Name', { exact: true }).fill('Hooked');
      await page.getByLabel('System prompt').fill('Triage the ticket.');
      await choose(page.getByRole('radio', { name: 'Webhook' }));
      // The plan changes while the form is open (another tab, an administrator, a lapsed subscription):
      // the refusal at save is the one left to say.
      await setTierByApi(w, page, 'free');
      const answer = await answerTo(page, 'POST', '/api/agents', () =>
        page.getByRole('button', { name: 'Create agent' }).click(),
      );
      const alert = page.getByRole('group', { name: 'Trigger' }).getByRole('alert');
      await expect(alert.getAttribute('data-code')).resolves.toBe('TIER_REQUIRED');
      const sentence = (await alert.locator('p').first().innerText()).trim();
      expect(sentence).toMatch(/^Your plan does not include this trigger\. Webhook agents .*needs a higher tier/);
      await expect(timesShown(page, sentence)).resolves.toBe(1);
      await expectPlainWords(page.locator('body'), 'tier-gated trigger');
      await expectAccessible(page, `tier-gated trigger (${width} px)`);

      const details = await supportDetails(alert);
      expect(details).toContain('TIER_REQUIRED');
      expect(details).toContain(requestIdOf(answer));
      await page.close();
    });

    it('"not a url" is not a web address (vault and site check), beside the field, INVALID_URL in the details', async () => {
      const page = await newUser();
      await page.getByLabel('Site address').fill('not a url');
      const added = await answerTo(page, 'POST', '/api/vault/sites', () =>
        page.getByRole('button', { name: 'Add site' }).click(),
      );
      const alert = page.locator('[role="alert"][data-code="INVALID_URL"]');
      await alert.waitFor();
      const problem = await fieldErrorOf(page, 'Site address');
      expect(problem).toBe('Not a web address (write it as https://…)');
      await expect(timesShown(page, problem)).resolves.toBe(1);
      expect(await alert.innerText()).not.toMatch(/web address|https:\/\/…|must use/);
      await expectPlainWords(page.locator('body'), 'vault: not a url');
      await expectAccessible(page, `vault: not a url (${width} px)`);
      await screenshot(page, `errors-vault-not-a-url-${width}`);
      let details = await supportDetails(alert);
      expect(details).toContain('INVALID_URL');
      expect(details).toContain(requestIdOf(added));

      // An http:// address stays "must use https://" (the same code).
      await page.getByLabel('Site address').fill('http://notes.example.com');
      await page.getByRole('button', { name: 'Add site' }).click();
      await page.getByText('Must start with https://.').waitFor();

      await page.goto('/check');
      await page.getByLabel('Site address').fill('not a url');
      const checked = await answerTo(page, 'POST', '/api/conformance/check', () =>
        page.getByRole('button', { name: 'Check', exact: true }).click(),
      );
      const checkAlert = page.locator('[role="alert"][data-code="INVALID_URL"]');
      await checkAlert.waitFor();
      await expect(fieldErrorOf(page, 'Site address')).resolves.toBe(problem);
      await expectPlainWords(page.locator('form'), 'check: not a url');
      await expectAccessible(page, `check: not a url (${width} px)`);
      details = await supportDetails(checkAlert);
      expect(details).toContain(requestIdOf(checked));
      await page.close();
    });

    it('payment method: refusals in words beside the field or in the note, never the API path', async () => {
      const page = await newUser();
      await openBilling(page);
      // Buying needs a card: said before, in words, instead of a refusal after.
      const buy = page.getByRole('region', { name: 'Buy credits' });
      await buy.getByText('Add a payment method above first: credits are charged to it.').waitFor();
      await expect(buy.getByRole('button', { name: 'Buy credits' }).isDisabled()).resolves.toBe(true);

      const card = page.getByRole('region', { name: 'Payment method' });
      await page.getByLabel('Payment method token').fill('tok_unknown');
      const stored = await answerTo(page, 'POST', '/api/billing/payment-method', () =>
        page.getByRole('button', { name: 'Add payment method' }).click(),
      );
      const refused = card.locator('[role="alert"][data-code="VALIDATION_ERROR"]');
      await refused.waitFor();
      const problem = await fieldErrorOf(page, 'Payment method token');
      expect(problem).toMatch(/^Unknown token; test tokens are tok_visa/);
      await expect(timesShown(page, problem)).resolves.toBe(1);
      await expectPlainWords(page.locator('body'), 'unknown payment method token');
      await expectAccessible(page, `unknown payment method token (${width} px)`);
      await screenshot(page, `errors-payment-method-${width}`);
      const details = await supportDetails(refused);
      expect(details).toContain('VALIDATION_ERROR');
      expect(details).toContain(requestIdOf(stored));
      await page.close();
    });
  });
});
