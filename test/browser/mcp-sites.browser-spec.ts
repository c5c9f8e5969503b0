import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { Locator } from 'playwright-core';
import { toolNamed } from '../fixtures/fake-model.js';
import { EverythingPeer } from '../fixtures/mcp/everything-peer.js';
import { OAuthPeer, PEER_ADMIN_SCOPE, PEER_READ_SCOPE } from '../fixtures/mcp/oauth-peer.js';
import {
  decodedWidth,
  DESKTOP_WIDTH,
  expectAccessible,
  expectNoSideScroll,
  screenshot,
  signUp,
  startConsoleWorld,
  WIDTHS,
  type ConsoleWorld,
} from './harness.js';
import { addMcpServer, connectMcpByOAuth, openTool, peerCertificates, storeToken, toolRowText } from './steps/mcp.js';
import { TRIP_SERVER_NAME, TRIP_TOKEN, TripPeer } from './steps/mcp-peer.js';

/** The JSON a <pre> or a textarea shows. */
async function jsonOf(locator: Locator): Promise<unknown> {
  const tag = await locator.evaluate((el) => el.tagName);
  return JSON.parse(tag === 'TEXTAREA' ? await locator.inputValue() : ((await locator.textContent()) ?? '')) as unknown;
}

/** The few DOM members these checks read (the suites compile without the DOM's types). */
interface AudioElement {
  readyState: number;
  addEventListener(event: string, listener: () => void): void;
}
const computedWhiteSpace = (el: unknown): string =>
  (globalThis as unknown as { getComputedStyle: (e: unknown) => { whiteSpace: string } }).getComputedStyle(el)
    .whiteSpace;

/** What the form below sends for plan_trip. */
const TRIP_INPUT = {
  destination: { city: 'Lisbon', country: 'Peru' },
  travellers: [{ name: 'Ana', age: 34 }, { name: 'Bo' }],
  nights: 3,
  start: '2026-12-01',
  flexible: true,
  tags: ['coast'],
};

describe('console: MCP servers as sites', () => {
  let w: ConsoleWorld;
  let trips: TripPeer;
  let everything: EverythingPeer;
  let oauth: OAuthPeer;

  beforeAll(async () => {
    const { ca, caFile, cert } = await peerCertificates();
    trips = await TripPeer.start(cert);
    everything = await EverythingPeer.start(cert);
    oauth = await OAuthPeer.start(ca);
    // The peers' own CA and ports (this suite uses no agentsite site).
    w = await startConsoleWorld({
      env: {
        SITE_CA_CERTS: caFile,
        SITE_ALLOW_PRIVATE_HOSTS: `localhost:${trips.port},localhost:${everything.port},localhost:${oauth.port}`,
      },
    });
    oauth.allowRedirect(`${w.stack.baseUrl}/api/oauth/callback`);
  });

  afterAll(async () => {
    await w?.stop();
    await trips?.stop();
    await everything?.stop();
    await oauth?.stop();
  });

  describe.each(WIDTHS)('at %i px wide', (width) => {
    it('adds a server that needs a token, connects it, and tries a tool with a nested form: text, image, sound, links and resources shown', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      // Found out at one width, chosen under "Kind of site" at the other.
      await addMcpServer(page, trips.url, { choose: width !== DESKTOP_WIDTH });
      // Before it accepts a credential the server has told nothing of itself: it goes by its host.
      const host = `localhost:${trips.port}`;
      await page.getByRole('heading', { level: 1, name: host }).waitFor();
      const card = page.getByRole('region', { name: 'Connection' });
      await card.getByText('Needs to be connected', { exact: true }).waitFor();
      await page.getByText(`${host} lists its tools once it is connected`).waitFor();
      await expect(page.getByText('MCP server', { exact: true }).count()).resolves.toBe(1);
      await expect(page.getByRole('region', { name: `Tools of ${host}` }).count()).resolves.toBe(0);
      await expectAccessible(page, `MCP server, needs to be connected (${width} px)`);
      await screenshot(page, `mcp-needs-connection-${width}`);

      await page.goto('/vault');
      const row = page.getByRole('row', { name: new RegExp(host) });
      await row.getByText('MCP server', { exact: true }).waitFor();
      await row.getByText('Needs to be connected', { exact: true }).waitFor();
      await expectAccessible(page, `vault with an MCP server (${width} px)`);
      await screenshot(page, `mcp-vault-list-${width}`);
      await row.getByRole('link', { name: host }).click();

      // A pasted token: the service lists the tools right after, with their titles and hints, and the
      // server's own name.
      await storeToken(page, TRIP_TOKEN);
      await page.getByRole('heading', { level: 1, name: TRIP_SERVER_NAME }).waitFor();
      await page.getByRole('region', { name: `Tools of ${TRIP_SERVER_NAME}` }).waitFor();
      expect(await toolRowText(page, 'plan_trip')).toMatch(
        /Plan a trip ?plan_trip.*Read-only.*Idempotent.*Reaches outside.*read/,
      );
      const cancel = await toolRowText(page, 'cancel_booking');
      expect(cancel).toMatch(/Cancel a booking ?cancel_booking.*Destructive.*delete/);
      expect(cancel).not.toMatch(/Read-only|Idempotent|Reaches outside/);
      expect(await toolRowText(page, 'find_route')).toMatch(/find_route.*write/);
      await expectAccessible(page, `MCP server's tools (${width} px)`);
      await screenshot(page, `mcp-tools-${width}`);

      // The form generated from the schema: a nested object, a list of objects, an enum, a default,
      // a date, a checkbox, a list of strings.
      const panel = await openTool(page, 'plan_trip');
      const destination = panel.getByRole('group', { name: 'Destination (required)' });
      await destination.getByLabel('City (required)').fill('Lisbon');
      await destination.getByLabel('Country').selectOption({ label: 'Peru' });
      const travellers = panel.getByRole('group', { name: 'Travellers (required)' });
      for (let i = 0; i < 3; i++) {
        await travellers.getByRole('button', { name: 'Add item to Travellers' }).click();
      }
      await travellers.getByRole('group', { name: 'Travellers, item 1' }).getByLabel('Name (required)').fill('Ana');
      const age = travellers.getByRole('group', { name: 'Travellers, item 1' }).getByLabel('Age');
      await age.fill('200');
      await travellers.getByRole('group', { name: 'Travellers, item 2' }).getByLabel('Name (required)').fill('Bo');
      await travellers.getByRole('button', { name: 'Remove item 3 of Travellers' }).click();
      await expect(travellers.getByRole('group', { name: 'Travellers, item 3' }).count()).resolves.toBe(0);
      await expect(panel.getByLabel('Nights').inputValue()).resolves.toBe('3');
      await panel.getByLabel('Start').fill('2026-12-01');
      await panel.getByLabel('Flexible dates').check();
      await panel.getByRole('button', { name: 'Add item to Tags' }).click();
      await panel.getByLabel('Tags, item 1').fill('coast');
      // The bounds are checked beside the field before anything is sent.
      await panel.getByRole('button', { name: 'Call plan_trip' }).click();
      await expect(age.getAttribute('aria-invalid')).resolves.toBe('true');
      await panel.getByText('must be at most 120').waitFor();
      await expectAccessible(page, `MCP tool form with a problem (${width} px)`);
      await age.fill('34');
      await panel.getByRole('button', { name: 'Call plan_trip' }).click();

      const result = panel.getByRole('region', { name: 'Result of plan_trip' });
      await result.waitFor();
      // Structured content as formatted JSON: the server received exactly what the form said.
      await expect(jsonOf(result.getByLabel('Structured content returned by plan_trip'))).resolves.toEqual({
        received: TRIP_INPUT,
      });
      const text = result.getByText('Trip to Lisbon');
      await expect(text.textContent()).resolves.toBe('Trip to Lisbon\nfor Ana, Bo, 3 nights');
      await expect(text.evaluate(computedWhiteSpace)).resolves.toBe('pre-wrap');
      const image = result.getByRole('img', { name: 'Image 2 returned by plan_trip' });
      await expect(decodedWidth(image)).resolves.toBe(20);
      // The sound plays from its data: URL (the console's policy allows media from data:).
      const sound = result.getByLabel('Sound 3 returned by plan_trip');
      await sound.evaluate(
        (node) =>
          new Promise<void>((resolve, reject) => {
            const el = node as unknown as AudioElement;
            if (el.readyState >= 1) {
              resolve();
            }
            el.addEventListener('loadedmetadata', () => resolve());
            el.addEventListener('error', () => reject(new Error('the sound did not load')));
          }),
      );
      await expect(result.getByRole('link', { name: 'City guide' }).getAttribute('href')).resolves.toBe(
        'https://guides.example.com/lisbon',
      );
      // A resource link that is not a web address is named, not linked.
      await result.getByText('A local file').waitFor();
      await expect(result.getByRole('link', { name: 'A local file' }).count()).resolves.toBe(0);
      await expect(result.getByLabel('Content of https://trips.example.com/itinerary.txt').textContent()).resolves.toBe(
        'Day 1: arrive\nDay 2: walk',
      );
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        result.getByRole('link', { name: /^Download ticket\.txt/ }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('ticket.txt');
      expect(readFileSync(await download.path(), 'utf8')).toBe('ticket 42');
      await expectAccessible(page, `MCP tool result (${width} px)`);
      await expectNoSideScroll(page, `MCP tool form and result (${width} px)`);
      await screenshot(page, `mcp-try-result-${width}`);

      // The same input as JSON, and back to the form when the form can hold all of it.
      await panel.getByRole('radio', { name: 'As JSON' }).check();
      const json = panel.getByLabel('Input (JSON)');
      await expect(jsonOf(json)).resolves.toEqual(TRIP_INPUT);
      await json.fill(JSON.stringify({ ...TRIP_INPUT, destination: { city: 'Porto' }, pets: 2 }));
      // (a click: the choice does not change, the form cannot hold "pets")
      await panel.getByRole('radio', { name: 'With the form' }).click();
      await panel.getByText('This JSON has parts the form cannot show').waitFor();
      await expect(panel.getByRole('radio', { name: 'As JSON' }).isChecked()).resolves.toBe(true);
      await json.fill(JSON.stringify({ ...TRIP_INPUT, destination: { city: 'Porto' } }));
      await panel.getByRole('radio', { name: 'With the form' }).check();
      await expect(panel.getByLabel('City (required)').inputValue()).resolves.toBe('Porto');
      await expect(panel.getByLabel('Country').inputValue()).resolves.toBe('');
      await page.close();
    });

    it('a property the form cannot render is written as JSON, a root it cannot render makes the whole input JSON, and a refusal is the server’s', async () => {
      const page = await w.newPage({ width });
      await signUp(page);
      await addMcpServer(page, trips.url);
      await storeToken(page, TRIP_TOKEN);

      const route = await openTool(page, 'find_route');
      await route.getByText('The input of find_route cannot be shown as a form: write it as JSON.').waitFor();
      await expect(route.getByRole('radio', { name: 'With the form' }).count()).resolves.toBe(0);
      await route.getByLabel('Input (JSON)').fill('{"place": "Lisbon"}');
      await route.getByRole('button', { name: 'Call find_route' }).click();
      await route
        .getByRole('region', { name: 'Result of find_route' })
        .getByText('Route: {"place":"Lisbon"}')
        .waitFor();
      await route.getByLabel('Input (JSON)').fill('[1, 2]');
      await route.getByRole('button', { name: 'Call find_route' }).click();
      await route.getByText('must be a JSON object').waitFor();

      const cancel = await openTool(page, 'cancel_booking');
      const booking = cancel.getByLabel('booking (required)');
      await expect(booking.evaluate((el) => el.tagName)).resolves.toBe('TEXTAREA');
      await booking.fill('"B-7"');
      await cancel.getByRole('button', { name: 'Call cancel_booking' }).click();
      const alert = cancel.getByRole('alert');
      await alert.waitFor();
      await expect(alert.getAttribute('data-code')).resolves.toBe('TOOL_EXECUTION_ERROR');
      await expect(alert.textContent()).resolves.toContain(`${TRIP_SERVER_NAME} refused the call.`);
      await expectAccessible(page, `MCP tool refusal (${width} px)`);
      await screenshot(page, `mcp-refusal-${width}`);
      await page.close();
    });
  });

  it('server-everything, which asks for no credential: ready at once, its tools titled and hinted, its image shown', async () => {
    const page = await w.newPage();
    await signUp(page);
    await addMcpServer(page, everything.url);
    const card = page.getByRole('region', { name: 'Connection' });
    await card.getByText('No sign-in needed', { exact: true }).waitFor();
    expect(await toolRowText(page, 'get-tiny-image')).toMatch(
      /Get Tiny Image Tool ?get-tiny-image.*Read-only.*Idempotent.*read/,
    );
    const sum = await openTool(page, 'get-sum');
    await sum.getByLabel(/^a \(required\)$/).fill('2');
    await sum.getByLabel(/^b \(required\)$/).fill('3.5');
    await sum.getByRole('button', { name: 'Call get-sum' }).click();
    await sum.getByRole('region', { name: 'Result of get-sum' }).getByText(/5\.5/).waitFor();
    const image = await openTool(page, 'get-tiny-image');
    await image.getByRole('button', { name: 'Call get-tiny-image' }).click();
    const shown = image.getByRole('region', { name: 'Result of get-tiny-image' }).getByRole('img');
    await expect(decodedWidth(shown)).resolves.toBe(20);
    await expectAccessible(page, 'server-everything');
    await screenshot(page, 'mcp-server-everything');
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });

  it('connects a server with OAuth as MCP defines it (discovery, registration, consent), then again with the scope a refused call asked for', async () => {
    const page = await w.newPage();
    await signUp(page);
    await addMcpServer(page, oauth.endpoint);
    const host = `localhost:${oauth.port}`;
    const card = page.getByRole('region', { name: 'Connection' });
    await card.getByText('Needs to be connected', { exact: true }).waitFor();
    await card.getByRole('heading', { name: 'Connect with OAuth' }).waitFor();
    await expect(page.getByText('OAuth 2.0', { exact: true }).count()).resolves.toBe(1);
    await expectAccessible(page, 'MCP server behind OAuth, needs to be connected');
    await screenshot(page, 'mcp-oauth-needs-connection');

    const granted = await connectMcpByOAuth(page, new RegExp(`^Connect ${host}$`), 'mcp-browser-user');
    expect(granted).toContain(PEER_READ_SCOPE);
    expect(granted).not.toContain(PEER_ADMIN_SCOPE);
    await page.getByRole('link', { name: /^Go to .*'s page$/ }).click();
    await page.getByRole('heading', { level: 1, name: 'OAuth Peer' }).waitFor();
    await card.getByText('Connected with OAuth', { exact: true }).waitFor();
    expect(await toolRowText(page, 'whoami')).toMatch(/Who am I ?whoami.*Read-only.*read/);

    const whoami = await openTool(page, 'whoami');
    await whoami.getByRole('button', { name: 'Call whoami' }).click();
    await whoami.getByRole('region', { name: 'Result of whoami' }).getByText(PEER_READ_SCOPE).waitFor();

    // reset_counter needs the admin scope: the server's 403 names it, and the card offers it.
    const reset = await openTool(page, 'reset_counter');
    await reset.getByRole('button', { name: 'Call reset_counter' }).click();
    await reset.getByRole('alert').waitFor();
    await card.getByText(PEER_ADMIN_SCOPE, { exact: true }).waitFor();
    await expectAccessible(page, 'MCP server asking for more access');
    await screenshot(page, 'mcp-oauth-step-up');
    const again = await connectMcpByOAuth(
      page,
      new RegExp(`^Connect OAuth Peer again with ${PEER_ADMIN_SCOPE}$`),
      'mcp-browser-user',
    );
    expect(again).toContain(PEER_ADMIN_SCOPE);
    await page.getByRole('link', { name: /^Go to .*'s page$/ }).click();
    const resetAgain = await openTool(page, 'reset_counter');
    await resetAgain.getByRole('button', { name: 'Call reset_counter' }).click();
    await resetAgain.getByRole('region', { name: 'Result of reset_counter' }).getByText('"counter":0').waitFor();
    expect(oauth.toolCalls.filter((c) => c.tool === 'reset_counter')).toHaveLength(1);
    expect(w.pageErrors).toEqual([]);
    await page.close();
  });

  it('in a chat, an MCP tool’s result shows its content blocks: the image the server returned', async () => {
    const page = await w.newPage();
    await signUp(page);
    await addMcpServer(page, everything.url);
    await page.getByText('MCP server', { exact: true }).waitFor();
    const name = (await page.getByRole('heading', { level: 1 }).textContent()) ?? '';
    await page.goto('/chat');
    await page.getByLabel('Title (optional)').fill('Logo');
    await page.getByRole('checkbox', { name: `Use ${name}` }).check();
    await page.getByRole('button', { name: 'Start conversation' }).click();
    await page.waitForURL(/\/chat\/ses_/);
    w.model.script(
      (req) => ({ text: 'Fetching it.', toolUses: [{ name: toolNamed(req, 'get-tiny-image'), input: {} }] }),
      { text: 'Here is the logo.' },
    );
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('Show me the MCP logo');
    await box.press('Enter');
    const log = page.getByRole('log', { name: 'Messages' });
    const call = log.getByRole('listitem', { name: `Tool call get-tiny-image on ${name}: ok` });
    await call.waitFor();
    await log.getByText('Here is the logo.').waitFor();
    await call.getByText('Result', { exact: true }).click();
    const image = call.getByRole('img', { name: 'Image 2 returned by get-tiny-image' });
    await expect(decodedWidth(image)).resolves.toBe(20);
    await expectAccessible(page, 'chat with an MCP tool result');
    await screenshot(page, 'mcp-chat-result');
    await page.close();
  });
});
