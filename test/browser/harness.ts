/**
 * The browser suites: headless Chromium (obtained once per machine by the global setup, see
 * scripts/runtime/chromium.ts) driving the console that the real service serves, against the
 * reference site and the scripted model (test/utils/world.ts). No mock of the API: every answer the
 * browser receives from /api is also checked against the OpenAPI document, like the suites' own.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from '@jest/globals';
import { type Browser, type BrowserContext, chromium, type Locator, type Page, type Response } from 'playwright-core';
import type { ContractRecorder } from '../setup/contract-recorder.js';
import { SERVICE_HEADER } from '../setup/contract-recorder.js';
import { TEST_ENV } from '../setup/shared-runtime.js';
import { TEST_PASSWORD, uniqueEmail } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

export const SCREENSHOT_DIR = path.resolve('.data', 'screenshots');

/** The widths the console is checked at: a laptop, and a phone held upright. */
export const DESKTOP_WIDTH = 1280;
export const PHONE_WIDTH = 390;
/** Both, for `describe.each(WIDTHS)` over a flow that must work on each. */
export const WIDTHS = [DESKTOP_WIDTH, PHONE_WIDTH] as const;

export interface ViewOptions {
  /** The viewport's width in CSS pixels (default: DESKTOP_WIDTH). */
  width?: number;
}

export interface ConsoleWorld extends World {
  browser: Browser;
  /** The address the console is served at (the API's). */
  consoleUrl: string;
  /** A fresh browser profile (its own cookies: its own signed-in user), at a given width. */
  newContext(options?: ViewOptions): Promise<BrowserContext>;
  /** A page in a fresh profile, at a given width. */
  newPage(options?: ViewOptions): Promise<Page>;
  /** Uncaught errors of the console's code in any page so far (a test ends with none). */
  pageErrors: string[];
}

function launchPath(): string {
  const file = process.env[TEST_ENV.chromium];
  if (file === undefined) {
    throw new Error(
      process.env[TEST_ENV.chromiumProblem] ??
        'No Chromium: run the browser suites with "npm test" (its set-up finds one)',
    );
  }
  return file;
}

function recorder(): ContractRecorder | undefined {
  return (globalThis as { __agentsiteContract?: ContractRecorder }).__agentsiteContract;
}

/** Every answer of the API that the browser receives goes through the same contract check as the suites' own. */
function checkAnswers(context: BrowserContext): void {
  context.on('response', (response: Response) => {
    const headers = response.headers();
    if (headers[SERVICE_HEADER] === undefined) {
      return;
    }
    const url = new URL(response.url());
    const request = response.request();
    const contentType = headers['content-type'];
    const streamed = contentType?.toLowerCase().startsWith('text/event-stream') === true;
    const read = async () => ({
      method: request.method(),
      path: `${url.pathname}${url.search}`,
      status: response.status(),
      contentType,
      // A redirect's or a stream's body is not read (the browser does not keep it).
      text:
        streamed || (response.status() >= 300 && response.status() < 400)
          ? undefined
          : request.method() === 'HEAD'
            ? ''
            : await response.text(),
    });
    recorder()?.observeLater(url.origin, read());
  });
}

export async function startConsoleWorld(
  options: { env?: Record<string, string>; demoSite?: boolean } = {},
): Promise<ConsoleWorld> {
  const executablePath = launchPath();
  // Chromium starts while the stack does (each takes seconds); neither is left running if the other fails.
  const browserStart = chromium.launch({ executablePath, headless: true });
  browserStart.catch(() => undefined); // awaited below, after the stack
  let world: Awaited<ReturnType<typeof startWorld>>;
  try {
    world = await startWorld({ env: options.env, demoSite: options.demoSite });
  } catch (err) {
    await browserStart.then((started) => started.close()).catch(() => undefined);
    throw err;
  }
  const browser = await browserStart.catch(async (err: unknown) => {
    await world.stop();
    throw err;
  });
  const pageErrors: string[] = [];
  const newContext = async (view: ViewOptions = {}): Promise<BrowserContext> => {
    const width = view.width ?? DESKTOP_WIDTH;
    const context = await browser.newContext({
      baseURL: world.stack.baseUrl,
      // The reference site's HTTPS uses the suites' own test CA.
      ignoreHTTPSErrors: true,
      viewport: width < DESKTOP_WIDTH ? { width, height: 844 } : { width, height: 860 },
      isMobile: width < DESKTOP_WIDTH,
      hasTouch: width < DESKTOP_WIDTH,
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    context.setDefaultTimeout(20_000);
    checkAnswers(context);
    context.on('page', (page) => page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`)));
    return context;
  };
  return {
    ...world,
    browser,
    consoleUrl: world.stack.baseUrl,
    newContext,
    async newPage(view?: ViewOptions) {
      const context = await newContext(view);
      return context.newPage();
    },
    pageErrors,
    async stop() {
      await browser.close();
      await world.stop();
    },
  };
}

/**
 * Saves a screenshot of the page as .data/screenshots/<name>.png (docs/screenshots/, which the README and
 * the docs show, are copies of these).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

let axeSource: string | undefined;

/**
 * Fails on the page's serious and critical accessibility problems (axe-core, WCAG 2 A and AA:
 * labels, names, landmarks, contrast, ARIA). axe runs through the DevTools protocol, which the
 * console's Content-Security-Policy does not govern.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  if (axeSource === undefined) {
    const require = createRequire(import.meta.url);
    axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  }
  // Once per document: a client-side navigation of the console keeps the axe already loaded.
  const loaded = await page.evaluate(() => 'axe' in globalThis);
  if (!loaded) {
    await page.evaluate(axeSource);
  }
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<any> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return (
      result.violations as Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>
    )
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect({ page: what, violations }).toEqual({ page: what, violations: [] });
}

export interface ConsoleUser {
  email: string;
  password: string;
}

/** Signs up through the console and accepts the terms; ends on the vault. */
export async function signUp(page: Page, email = uniqueEmail('console')): Promise<ConsoleUser> {
  await page.goto('/signup');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Terms of service' }).waitFor();
  await page.getByLabel(/I accept the terms/).check();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL('**/vault');
  return { email, password: TEST_PASSWORD };
}

/** Signs in on the sign-in page (the one the page is on, keeping its ?next=, or a fresh one). */
export async function signIn(page: Page, user: ConsoleUser): Promise<void> {
  if (!page.url().includes('/signin')) {
    await page.goto('/signin');
  }
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname !== '/signin');
}

/**
 * The API token of the user signed in on this page (for the set-up a test does through the API):
 * the console's HttpOnly session cookie, which only the browser itself (not the page) can read.
 */
export async function tokenOf(page: Page): Promise<string> {
  // Sent to the API's paths only (Path=/api), not to the console page's address.
  const cookies = await page.context().cookies(new URL('/api/', page.url()).href);
  const token = cookies.find((cookie) => cookie.name === 'agentsite_session' && cookie.value !== '')?.value;
  if (token === undefined) {
    throw new Error('nobody is signed in on this page');
  }
  return token;
}

/**
 * Fails when the page scrolls sideways, or when an element reaches past the viewport's right edge
 * (cut off, or pushing the page wider), except inside an element that scrolls on its own. Run it once
 * the page shows what it loads.
 */
export async function expectNoSideScroll(page: Page, what: string): Promise<void> {
  const found = await page.evaluate(() => {
    interface El {
      tagName: string;
      id: string;
      className: unknown;
      textContent: string | null;
      parentElement: El | null;
      getBoundingClientRect(): { left: number; right: number; width: number; height: number };
    }
    const g = globalThis as unknown as {
      document: {
        scrollingElement: { scrollWidth: number; clientWidth: number };
        body: El & { querySelectorAll(s: string): El[] };
      };
      getComputedStyle(el: El): { overflowX: string; position: string; clip: string; visibility: string };
      scrollX: number;
    };
    const root = g.document.scrollingElement;
    const width = root.clientWidth;
    const scrollsOnItsOwn = (el: El): boolean => {
      for (let a = el.parentElement; a !== null; a = a.parentElement) {
        const overflow = g.getComputedStyle(a).overflowX;
        if (overflow === 'auto' || overflow === 'scroll') {
          return true;
        }
      }
      return false;
    };
    // Hidden for the eye but kept for screen readers (clip: rect(0 0 0 0)), or not shown at all.
    const unseen = (el: El): boolean => {
      for (let a: El | null = el; a !== null; a = a.parentElement) {
        const style = g.getComputedStyle(a);
        if (style.visibility === 'hidden' || /rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)/.test(style.clip)) {
          return true;
        }
      }
      return false;
    };
    const describe = (el: El): string => {
      const cls =
        typeof el.className === 'string' && el.className !== '' ? `.${el.className.split(' ').join('.')}` : '';
      const id = el.id === '' ? '' : `#${el.id}`;
      return `${el.tagName.toLowerCase()}${id}${cls} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    };
    const past: string[] = [];
    for (const el of Array.from(g.document.body.querySelectorAll('*'))) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) {
        continue;
      }
      const right = box.right + g.scrollX;
      if (right > width + 0.5 && !scrollsOnItsOwn(el) && !unseen(el)) {
        past.push(`${describe(el)} ends at ${Math.round(right)} px`);
      }
    }
    return { scrollWidth: root.scrollWidth, clientWidth: width, past: past.slice(0, 12) };
  });
  expect({ page: what, scrollWidth: Math.max(found.scrollWidth, found.clientWidth), past: found.past }).toEqual({
    page: what,
    scrollWidth: found.clientWidth,
    past: [],
  });
}

/** An image's width once loaded and decoded (its decode() rejects when it cannot be: blocked or broken). */
export const decodedWidth = (locator: Locator): Promise<number> =>
  locator.evaluate((el) => {
    const img = el as unknown as { decode(): Promise<void>; naturalWidth: number };
    return img.decode().then(() => img.naturalWidth);
  });
