import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { issueServerCert } from '../../examples/site/tls.js';
import type { FakeModel, RecordedRequest } from '../fixtures/fake-model.js';
import { CountingPeer, TINY_PNG } from '../fixtures/mcp/counting-peer.js';
import { streamTurn } from '../utils/chat.js';
import type { Http } from '../utils/http.js';
import type { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** The name the model was offered for the MCP tool `tool` (the server's name mapped into the model's pattern). */
function mcpToolNamed(request: RecordedRequest, mapped: string) {
  const found = request.body.tools?.find((t) => t.name.endsWith(`__${mapped}`));
  if (found === undefined) {
    throw new Error(`the request offers no tool ${mapped}: ${request.body.tools?.map((t) => t.name).join(', ')}`);
  }
  return found;
}

describe('chat with an MCP server (e2e)', () => {
  let world: World;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let peer: CountingPeer;

  beforeAll(async () => {
    world = await startWorld({
      worker: false,
      env: { OUTGOING_CALLS_PER_MINUTE: '1000', SITE_ALLOW_PRIVATE_HOSTS: 'localhost' },
    });
    ({ model, stack, http } = world);
    peer = await CountingPeer.start(await issueServerCert(world.sites.ca));
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await peer?.stop();
    await world?.stop();
  });

  async function sessionOverPeer(): Promise<{ user: TestUser; token: string; siteId: string }> {
    const user = await registerUser(http);
    const added = await http.post('/api/vault/sites', { url: peer.url }, { token: user.token });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ protocol: 'mcp', status: 'ready' });
    const created = await http.post('/api/sessions', { sites: [{ siteId: added.body.id }] }, { token: user.token });
    expect(created.status).toBe(201);
    return { user, token: created.body.token, siteId: added.body.id };
  }

  it('a turn calls MCP tools by mapped names: the server gets its own names, the stream its results, the model text and images', async () => {
    const { user, token } = await sessionOverPeer();
    const before = peer.calls.length;
    model.script(
      (req) => ({
        toolUses: [
          { name: mcpToolNamed(req, 'events_record').name, input: { title: 'Lunch' } },
          { name: mcpToolNamed(req, 'chart').name, input: {} },
        ],
      }),
      { text: 'Recorded, and here is the chart.' },
    );
    const { status, events } = await streamTurn(stack.baseUrl, user.token, token, 'Note lunch and show me the chart');
    expect(status).toBe(200);

    // The model was offered the tools in its name pattern, with their whole JSON Schema and title.
    const offered = mcpToolNamed(model.requests[0]!, 'events_record');
    expect(offered.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(offered.description).toBe(
      'Record an event: Records an event in the log (one effect per call) (site: Event log)',
    );
    expect(offered.input_schema).toEqual({
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 } },
      required: ['title'],
      additionalProperties: false,
    });

    // The server was called with its own names.
    expect(peer.calls.slice(before).map((c) => [c.tool, c.args])).toEqual([
      ['events.record', { title: 'Lunch' }],
      ['chart', {}],
    ]);

    // The SSE events keep their shapes; a result is the server's {content, structuredContent?}.
    const kinds = events.map((e) => e.event).filter((e, i, all) => e !== 'text' || all[i - 1] !== 'text');
    expect(kinds).toEqual(['tool_call', 'tool_result', 'tool_call', 'tool_result', 'text', 'done']);
    const [recordCall, chartCall] = events.filter((e) => e.event === 'tool_call');
    expect(recordCall!.data).toMatchObject({ site: 'Event log', tool: 'events.record', input: { title: 'Lunch' } });
    expect(chartCall!.data).toMatchObject({ site: 'Event log', tool: 'chart', input: {} });
    const [recorded, chart] = events.filter((e) => e.event === 'tool_result');
    const number = peer.events.length;
    expect(recorded!.data).toEqual({
      id: recordCall!.data.id,
      ok: true,
      result: {
        content: [{ type: 'text', text: `Recorded "Lunch" as event #${number}` }],
        structuredContent: { event: number },
      },
    });
    expect(chart!.data).toEqual({
      id: chartCall!.data.id,
      ok: true,
      result: {
        content: [
          { type: 'text', text: `${number} events` },
          { type: 'image', mimeType: 'image/png', data: TINY_PNG },
        ],
      },
    });

    // The model was given the text and the image as blocks of their own.
    const results = model.requests[1]!.body.messages.at(-1)!.content as Array<Record<string, unknown>>;
    expect(results).toEqual([
      {
        type: 'tool_result',
        tool_use_id: recordCall!.data.id,
        content: [{ type: 'text', text: `Recorded "Lunch" as event #${number}` }],
      },
      {
        type: 'tool_result',
        tool_use_id: chartCall!.data.id,
        content: [
          { type: 'text', text: `${number} events` },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: TINY_PNG } },
        ],
      },
    ]);

    // The reply keeps the calls as the stream showed them; the next turn sends the image again.
    const stored = await http.get(`/api/sessions/${token}`, { token: user.token });
    expect(stored.body.messages[1].toolCalls).toMatchObject([
      { site: 'Event log', tool: 'events.record', ok: true, result: recorded!.data.result },
      { site: 'Event log', tool: 'chart', ok: true, result: chart!.data.result },
    ]);
    model.script({ text: 'Same chart.' });
    expect(
      (await http.post(`/api/sessions/${token}/messages`, { content: 'Again?' }, { token: user.token })).status,
    ).toBe(200);
    // (as the first time: PostgreSQL's jsonb keeps no key order, so compared as values)
    expect(model.requests[2]!.body.messages[2]).toEqual({ role: 'user', content: results });
  });
});
