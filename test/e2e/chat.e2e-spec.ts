import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { ReferenceSite } from '../../examples/site/site.js';
import { ChatRepository } from '../../src/chat/chat.repository.js';
import { FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { creditsOn } from '../utils/credits.js';
import { expectError, Http } from '../utils/http.js';
import { partsOfStream, partSummary, streamTurn } from '../utils/chat.js';
import { ownDataSource } from '../utils/db.js';
import { eventually } from '../utils/runs.js';
import { approveAtSite, completeOAuth, siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';

/** A node of PostgreSQL's `EXPLAIN (FORMAT JSON)` plan, with the fields the tests read. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, its subplans included. */
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

describe('chat sessions (e2e)', () => {
  let sites: TestSites;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let world: World;

  beforeAll(async () => {
    // Any port on localhost: a test starts a second reference site after the service.
    world = await startWorld({
      worker: false,
      env: { OUTGOING_CALLS_PER_MINUTE: '1000', SITE_ALLOW_PRIVATE_HOSTS: 'localhost' },
    });
    ({ sites, site, model, stack, http, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  async function session(
    tools?: string[],
    bearer = true,
  ): Promise<{ user: TestUser; token: string; siteId: string; body: any }> {
    const user = await registerUser(http);
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id;
    if (bearer) {
      await http.post(
        `/api/vault/sites/${siteId}/token`,
        { token: site.issueApiToken('alice').token },
        { token: user.token },
      );
    }
    const created = await http.post(
      '/api/sessions',
      { sites: [{ siteId, ...(tools ? { tools } : {}) }], title: 'Notes' },
      { token: user.token },
    );
    expect(created.status).toBe(201);
    return { user, token: created.body.token, siteId, body: created.body };
  }

  it('streams a turn with text and a tool call, in order, with text arriving before the model finished', async () => {
    const { user, token } = await session();
    site.createNote('alice', 'Groceries', 'milk');
    model.script(
      (req) => ({
        text: 'Let me look at your notes.',
        toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }],
        chunkDelayMs: 60,
      }),
      { text: 'You have a note about groceries.', chunkDelayMs: 60 },
    );
    const { status, events } = await streamTurn(stack.baseUrl, user.token, token, 'What notes do I have?');
    expect(status).toBe(200);
    const kinds = events.map((e) => e.event).filter((e, i, all) => e !== 'text' || all[i - 1] !== 'text');
    expect(kinds).toEqual(['text', 'tool_call', 'tool_result', 'text', 'done']);
    expect(
      events
        .filter((e) => e.event === 'text')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('Let me look at your notes.You have a note about groceries.');
    const call = events.find((e) => e.event === 'tool_call')!;
    expect(call.data).toMatchObject({ site: 'Reference Notebook', tool: 'list_notes', input: {} });
    const result = events.find((e) => e.event === 'tool_result')!;
    expect(result.data).toMatchObject({ id: call.data.id, ok: true });
    expect(result.data.result.results.map((n: { title: string }) => n.title)).toContain('Groceries');
    const done = events[events.length - 1]!;
    expect(done.data.usage).toMatchObject({ inputTokens: 200, outputTokens: 40, credits: 2 });
    // Deltas are passed on as the model produces them, not at the end.
    const firstText = events.find((e) => e.event === 'text')!;
    expect(firstText.receivedAt).toBeLessThan(model.requests[0]!.finishedAt!);

    const stored = await http.get(`/api/sessions/${token}`, { token: user.token });
    expect(stored.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(stored.body.messages[1]).toMatchObject({
      id: done.data.messageId,
      toolCalls: [{ tool: 'list_notes', ok: true }],
    });
    // The next turn carries the conversation so far, tool use and result included.
    model.script({ text: 'Still the same.' });
    await http.post(`/api/sessions/${token}/messages`, { content: 'And now?' }, { token: user.token });
    const sent = model.requests[2]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent[0]).toEqual({ role: 'user', content: 'What notes do I have?' });
    expect(JSON.stringify(sent[1]!.content)).toContain('"tool_use"');
    expect(JSON.stringify(sent[2]!.content)).toContain('Groceries');
    expect(sent[4]).toEqual({ role: 'user', content: 'And now?' });
  });

  it('a turn "text, tool call, text" is kept as its parts in order, text parts apart, as the stream showed them', async () => {
    const { user, token, body } = await session();
    site.createNote('alice', 'Groceries', 'milk');
    model.script(
      (req) => ({ text: 'Let me use a tool.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }),
      { text: 'All done: one note.' },
    );
    const { events } = await streamTurn(stack.baseUrl, user.token, token, 'What notes do I have?');
    const live = partsOfStream(events);
    expect(live.map(partSummary)).toEqual([
      'text: Let me use a tool.',
      'tool_call: list_notes ok',
      'text: All done: one note.',
    ]);
    // Reloaded: the same parts in the same order, the tool call with its result, the texts apart.
    const stored = await http.get(`/api/sessions/${token}`, { token: user.token });
    const reply = stored.body.messages[1];
    expect(reply.parts).toEqual(live);
    expect(reply.content).toBe('Let me use a tool.\n\nAll done: one note.');
    expect(reply.toolCalls).toMatchObject([{ tool: 'list_notes', ok: true }]);

    // The JSON answer of a turn carries its parts too, as the session then returns them.
    model.script(
      (req) => ({ text: 'Checking again.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }),
      { text: 'Still one note.' },
    );
    const answer = await http.post(`/api/sessions/${token}/messages`, { content: 'And now?' }, { token: user.token });
    expect(answer.status).toBe(200);
    expect(answer.body.message.parts.map(partSummary)).toEqual([
      'text: Checking again.',
      'tool_call: list_notes ok',
      'text: Still one note.',
    ]);
    const again = await http.get(`/api/sessions/${token}`, { token: user.token });
    expect(again.body.messages[3].parts).toEqual(answer.body.message.parts);
    // The model is sent the first turn as it saw it: each call's text apart, with its tool use and result.
    const sent = model.requests[2]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent[1]!.content).toMatchObject([{ type: 'text', text: 'Let me use a tool.' }, { type: 'tool_use' }]);
    expect(sent[3]!.content).toEqual([{ type: 'text', text: 'All done: one note.' }]);

    // A reply saved before parts were kept (no parts in its row) reads the same: its parts come from
    // the model messages it kept, in their order.
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      await db.query('UPDATE chat_messages SET parts = NULL WHERE session_id = $1', [body.id]);
    } finally {
      await db.end();
    }
    const old = await http.get(`/api/sessions/${token}`, { token: user.token });
    expect(old.body.messages[1].parts).toEqual(live);
    expect(old.body.messages[3].parts).toEqual(answer.body.message.parts);
  });

  it("a tool's answer over 64 KB: the user gets it whole, the model its first 64 KB, in this turn and the next", async () => {
    const { user, token } = await session();
    for (const n of [1, 2, 3]) {
      site.createNote('alice', `chat long note ${n}`, 'z'.repeat(30_000));
    }
    model.script(
      (req) => ({ text: 'Listing.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }),
      { text: 'Listed.' },
      { text: 'Again.' },
    );
    const { events } = await streamTurn(stack.baseUrl, user.token, token, 'List my notes');
    const result = events.find((e) => e.event === 'tool_result')!;
    const whole = JSON.stringify(result.data.result);
    expect(whole.length).toBeGreaterThan(90_000);
    expect(result.data.result.results.filter((n: { body: string }) => n.body.length === 30_000)).toHaveLength(3);
    const cut = `[cut: the answer was ${Buffer.byteLength(whole)} bytes; only its first 65536 are kept]`;
    /** The tool_result block the model was sent in request `n` of this test. */
    const shown = (n: number): string => {
      const blocks = model.requests[n]!.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      const block = blocks.find((b: { type?: string }) => b.type === 'tool_result') as { content: string };
      return block.content;
    };
    expect(shown(1).endsWith(cut)).toBe(true);
    expect(Buffer.byteLength(shown(1))).toBeLessThanOrEqual(65_536 + Buffer.byteLength(cut) + 1);
    expect(whole.startsWith(shown(1).slice(0, 65_000))).toBe(true);
    const stored = await http.get(`/api/sessions/${token}`, { token: user.token });
    // Kept whole for the user (PostgreSQL's jsonb orders the keys its own way).
    expect(stored.body.messages[1].toolCalls[0].result).toEqual(result.data.result);
    await http.post(`/api/sessions/${token}/messages`, { content: 'And now?' }, { token: user.token });
    expect(shown(2)).toBe(shown(1));
  });

  it("a session over two sites offers both sites' tools and sends each earlier message once", async () => {
    const other = await sites.start();
    try {
      const { user, siteId } = await session();
      const otherId = (await http.post('/api/vault/sites', { url: other.url }, { token: user.token })).body.id;
      await http.post(
        `/api/vault/sites/${otherId}/token`,
        { token: other.issueApiToken('bob').token },
        { token: user.token },
      );
      const two = await http.post('/api/sessions', { sites: [{ siteId }, { siteId: otherId }] }, { token: user.token });
      expect(two.status).toBe(201);
      model.script({ text: 'First answer.' }, { text: 'Second answer.' }, { text: 'Third answer.' });
      for (const content of ['one', 'two', 'three']) {
        const turn = await http.post(`/api/sessions/${two.body.token}/messages`, { content }, { token: user.token });
        expect(turn.status).toBe(200);
      }
      const last = model.requests[2]!.body;
      expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      expect(last.messages).toMatchObject([
        { content: 'one' },
        { content: [{ type: 'text', text: 'First answer.' }] },
        { content: 'two' },
        { content: [{ type: 'text', text: 'Second answer.' }] },
        { content: 'three' },
      ]);
      // Both sites' tools are offered (each site's list_notes under a name of its own).
      const listNotes = (last.tools ?? []).filter((t) => t.name.includes('list_notes'));
      expect(listNotes).toHaveLength(2);
    } finally {
      await other.stop();
    }
  });

  it('answers once in JSON without Accept: text/event-stream; a model 500 is MODEL_ERROR', async () => {
    const { user, token } = await session();
    model.script({ text: 'Hello there.' });
    const answer = await http.post(`/api/sessions/${token}/messages`, { content: 'Hi' }, { token: user.token });
    expect(answer.status).toBe(200);
    expect(answer.body.message).toMatchObject({ role: 'assistant', content: 'Hello there.', toolCalls: [] });
    model.script({ status: 500 });
    const failed = await http.post(`/api/sessions/${token}/messages`, { content: 'Again' }, { token: user.token });
    expectError(failed, 'MODEL_ERROR', 502);
    model.script({ status: 500 });
    const streamed = await streamTurn(stack.baseUrl, user.token, token, 'Streamed');
    expect(streamed.events.map((e) => e.event)).toEqual(['error']);
    expect(streamed.events[0]!.data).toMatchObject({ code: 'MODEL_ERROR', statusCode: 502 });
    expect((await http.get(`/api/sessions/${token}`, { token: user.token })).body.messages).toHaveLength(2);
  });

  it("a turn's read, its save and its charge are named statements, prepared once per connection, and work as before", async () => {
    const { user, token, body } = await session();
    model.script({ text: 'Hello there.' });
    expect((await http.post(`/api/sessions/${token}/messages`, { content: 'Hi' }, { token: user.token })).status).toBe(
      200,
    );
    // The repository on a pool of its own, two connections at most (another process of the service).
    const dataSource = await ownDataSource(stack, 2);
    try {
      const chats = new ChatRepository(dataSource);
      for (let i = 0; i < 3; i += 1) {
        const rows = await chats.turnRows({ column: 'id', value: body.id }, user.id);
        expect(rows.found?.session.id).toBe(body.id);
        expect(rows.sites.map((s) => s.id)).toEqual([body.sites[0].siteId]);
        expect(rows.history.map((m) => [m.role, m.content])).toEqual([
          ['user', 'Hi'],
          ['assistant', 'Hello there.'],
        ]);
        // Another user's id finds nothing through the same prepared statement.
        expect((await chats.turnRows({ column: 'id', value: body.id }, randomUUID())).found).toBeNull();
      }
      // The save and the charge, three times each through the same two connections.
      const credits = creditsOn(dataSource);
      const balances: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const reply = {
          id: randomUUID(),
          content: `Saved ${i}`,
          toolCalls: [],
          modelMessages: [],
          parts: [{ type: 'text' as const, text: `Saved ${i}` }],
          usage: null,
          cut: false,
        };
        const saved = await chats.saveTurn({ sessionId: body.id, content: `Asked ${i}`, reply });
        expect(saved).toMatchObject({ id: reply.id, role: 'assistant', content: `Saved ${i}` });
        const charge = await credits.charge(user.id, 1, 'chat_turn', `chat:${reply.id}:1`, undefined);
        expect(charge.charged).toBe(1);
        balances.push(charge.balance);
      }
      expect(balances).toEqual([balances[0], balances[0]! - 1, balances[0]! - 2]);
      // A turn's save gives its slot back in the same statement: that turn's slot only, not another's.
      const slotsOf = async (): Promise<number[]> =>
        (
          (await dataSource.query('SELECT slot FROM chat_turn_slots WHERE user_id = $1 ORDER BY slot', [
            user.id,
          ])) as Array<{ slot: number }>
        ).map((r) => r.slot);
      const turns = [randomUUID(), randomUUID()];
      const taken = [
        await chats.takeTurnSlot(user.id, turns[0]!, 2, 60_000),
        await chats.takeTurnSlot(user.id, turns[1]!, 2, 60_000),
      ];
      expect(taken).toEqual([1, 2]);
      const slot = { userId: user.id, slot: 2, turn: turns[0]! };
      const reply = {
        id: randomUUID(),
        content: 'S',
        toolCalls: [],
        modelMessages: [],
        parts: [],
        usage: null,
        cut: false,
      };
      await chats.saveTurn({ sessionId: body.id, content: 'Q', reply, slot });
      expect(await slotsOf()).toEqual([1, 2]); // slot 2 is the other turn's
      slot.slot = 1;
      await chats.saveTurn({ sessionId: body.id, content: 'Q', reply: { ...reply, id: randomUUID() }, slot });
      expect(await slotsOf()).toEqual([2]);
      await chats.freeTurnSlot(user.id, 2, turns[1]!);
      expect(await slotsOf()).toEqual([]);
      await expect(credits.charge(randomUUID(), 1, 'chat_turn')).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      const history = (await chats.turnRows({ column: 'id', value: body.id }, user.id)).history;
      expect(history.map((m) => m.content).slice(2)).toEqual([
        'Asked 0',
        'Saved 0',
        'Asked 1',
        'Saved 1',
        'Asked 2',
        'Saved 2',
        'Q',
        'S',
        'Q',
        'S',
      ]);
      // Both of the pool's connections at once: the turn's statements are prepared at the protocol
      // level on those that ran them, once each; the charge's (one simple-protocol message, which has
      // no protocol-level statements) by SQL PREPARE.
      const runners = [dataSource.createQueryRunner(), dataSource.createQueryRunner()];
      try {
        const prepared = (
          await Promise.all(
            runners.map((runner) =>
              runner.query('SELECT name, from_sql FROM pg_prepared_statements WHERE name = ANY($1)', [
                ['chat_turn_by_id', 'chat_save_turn', 'agentsite_charge_lock', 'agentsite_charge'],
              ]),
            ),
          )
        ).flat() as Array<{ name: string; from_sql: boolean }>;
        for (const [name, fromSql] of [
          ['chat_turn_by_id', false],
          ['chat_save_turn', false],
          ['agentsite_charge_lock', true],
          ['agentsite_charge', true],
        ] as const) {
          const on = prepared.filter((p) => p.name === name);
          expect([name, on.length >= 1 && on.length <= 2, on.every((p) => p.from_sql === fromSql)]).toEqual([
            name,
            true,
            true,
          ]);
        }
      } finally {
        await Promise.all(runners.map((runner) => runner.release()));
      }
    } finally {
      await dataSource.destroy();
    }
  });

  it("a turn's read finds the session's sites by their primary key, not by reading every user's sites", async () => {
    const { user, body } = await session();
    const dataSource = await ownDataSource(stack, 1);
    try {
      const chats = new ChatRepository(dataSource);
      // Prepares the statement on the pool's one connection, which then explains it.
      expect((await chats.turnRows({ column: 'id', value: body.id }, user.id)).sites).toHaveLength(1);
      // With sequential scans priced out, PostgreSQL still picks one where no index can answer the
      // condition: the plan must reach `sites` some other way.
      await dataSource.query('SET enable_seqscan = off');
      const explained: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> = await dataSource.query(
        `EXPLAIN (FORMAT JSON) EXECUTE chat_turn_by_id('${body.id}', '${user.id}')`,
      );
      const onSites = planNodes(explained[0]!['QUERY PLAN'][0]!.Plan).filter((n) => n['Relation Name'] === 'sites');
      expect(onSites.length).toBeGreaterThan(0);
      expect(onSites.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    } finally {
      await dataSource.destroy();
    }
  });

  it('session token errors: INVALID_SESSION, SESSION_NOT_FOUND, SESSION_EXPIRED', async () => {
    const { user, token } = await session();
    expectError(await http.get('/api/sessions/not-a-token', { token: user.token }), 'INVALID_SESSION', 400);
    expectError(await http.get(`/api/sessions/ses_${'A'.repeat(43)}`, { token: user.token }), 'SESSION_NOT_FOUND', 404);
    const stranger = await registerUser(http);
    expectError(await http.get(`/api/sessions/${token}`, { token: stranger.token }), 'SESSION_NOT_FOUND', 404);
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      await db.query(`UPDATE chat_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.id]);
    } finally {
      await db.end();
    }
    expectError(await http.get(`/api/sessions/${token}`, { token: user.token }), 'SESSION_EXPIRED', 410);
    expectError(
      await http.post(`/api/sessions/${token}/messages`, { content: 'x' }, { token: user.token }),
      'SESSION_EXPIRED',
      410,
    );
    expect(model.requests).toHaveLength(0);
  });

  it('a client that disconnects mid-stream aborts the model request and nothing partial is saved', async () => {
    const { user, token } = await session();
    model.script({ text: 'This is a long answer that streams slowly and is never finished.', chunkDelayMs: 150 });
    const { events } = await streamTurn(stack.baseUrl, user.token, token, 'Tell me a story', (e) =>
      e.event === 'text' ? 'stop' : undefined,
    );
    expect(events.map((e) => e.event)).toEqual(['text']);
    await eventually(
      'the model request to be aborted',
      async () => (model.requests[0]?.aborted ? true : undefined),
      10_000,
    );
    await eventually(
      'STREAM_ABORTED in the log',
      async () => (stack.logs().includes('STREAM_ABORTED') ? true : undefined),
      10_000,
    );
    expect((await http.get(`/api/sessions/${token}`, { token: user.token })).body.messages).toEqual([]);
  });

  it('a session over read-only tools asks only for read; an OAuth grant short of the scopes is reported', async () => {
    const readOnly = await session(['search_notes', 'get_note']);
    expect(readOnly.body.scopes).toEqual(['read']);
    expect(readOnly.body.sites[0]).toMatchObject({ tools: ['search_notes', 'get_note'], scopes: ['read'] });
    expect(readOnly.body.sites[0].missingScopes).toBeUndefined();
    const all = await session();
    expect(all.body.scopes).toEqual(['read', 'write', 'delete', 'admin']);
    expectError(
      await http.post('/api/sessions', { sites: [{ siteId: all.siteId, tools: ['nope'] }] }, { token: all.user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expectError(await http.post('/api/sessions', { sites: [] }, { token: all.user.token }), 'VALIDATION_ERROR', 400);
    expectError(
      await http.post('/api/sessions', { sites: [{ siteId: readOnly.siteId }] }, { token: all.user.token }),
      'VALIDATION_ERROR',
      400,
    );

    // OAuth-connected with read only, then a session that wants to write.
    const user = all.user;
    site.allowRedirect('agentsite', `${stack.baseUrl}/api/oauth/callback`);
    await http.delete(`/api/vault/sites/${all.siteId}/token`, { token: user.token });
    const start = await http.post(
      `/api/vault/sites/${all.siteId}/oauth/start`,
      { tools: ['search_notes'] },
      { token: user.token },
    );
    const callback = await approveAtSite(sites.ca, start.body.authorizationUrl);
    expect((await completeOAuth(http, callback, user.token)).status).toBe(200);
    const writer = await http.post(
      '/api/sessions',
      { sites: [{ siteId: all.siteId, tools: ['search_notes', 'create_note'] }] },
      { token: user.token },
    );
    expect(writer.body.sites[0]).toMatchObject({
      scopes: ['read', 'write'],
      missingScopes: ['write'],
      connectPath: `/api/vault/sites/${all.siteId}/oauth/start`,
    });
  });

  it('NO_CREDITS before the model is called', async () => {
    const { user, token } = await session();
    await http.patch(`/api/admin/users/${user.id}`, { credits: 0 }, { token: admin.token });
    expectError(
      await http.post(`/api/sessions/${token}/messages`, { content: 'x' }, { token: user.token }),
      'NO_CREDITS',
      402,
    );
    expect(model.requests).toHaveLength(0);
  });

  it("GET /sessions lists the caller's own live sessions in the request's scope, newest first, paged; the id opens one", async () => {
    const { user, token, siteId } = await session(['list_notes']);
    model.script({ text: 'Hi.' });
    await http.post(`/api/sessions/${token}/messages`, { content: 'Hello' }, { token: user.token });
    const more: string[] = [];
    for (const title of ['Second', 'Third']) {
      const created = await http.post('/api/sessions', { sites: [{ siteId }], title }, { token: user.token });
      more.push(created.body.id as string);
    }
    // An expired session is not listed (it could not be opened).
    const expired = await http.post('/api/sessions', { sites: [{ siteId }], title: 'Old' }, { token: user.token });
    const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await db.connect();
    try {
      await db.query(`UPDATE chat_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        expired.body.id,
      ]);
      // The list is read through the owner's index, not by scanning every user's sessions (the planner
      // told not to scan: with a handful of rows it would, index or not).
      await db.query('SET enable_seqscan = off');
      const plan = await db.query(
        'EXPLAIN SELECT id FROM chat_sessions WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 3',
        [user.id],
      );
      expect(plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n')).toMatch(
        /Index Scan (using|on) chat_sessions_user/,
      );
    } finally {
      await db.end();
    }
    // Another user's session never shows.
    const stranger = await session();

    const first = await http.get('/api/sessions?limit=2', { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((s: { title: string }) => s.title)).toEqual(['Third', 'Second']);
    expect(first.body.items[0]).not.toHaveProperty('token');
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await http.get(`/api/sessions?limit=2&cursor=${first.body.nextCursor}`, { token: user.token });
    expect(second.body).toMatchObject({ nextCursor: null });
    expect(second.body.items).toHaveLength(1);
    const listed = second.body.items[0];
    expect(listed).toMatchObject({ title: 'Notes', sites: [{ siteId, tools: ['list_notes'] }], messageCount: 2 });
    expect(Date.parse(listed.lastMessageAt)).toBeGreaterThanOrEqual(Date.parse(listed.createdAt));
    expect(first.body.items[0]).toMatchObject({ messageCount: 0, lastMessageAt: null, sites: [{ tools: null }] });
    const strangers = await http.get('/api/sessions', { token: stranger.user.token });
    expect(strangers.body.items.map((s: { id: string }) => s.id)).toEqual([stranger.body.id]);

    // The listed id stands in for the token: read, chat, delete; for its owner only.
    const opened = await http.get(`/api/sessions/${listed.id}`, { token: user.token });
    expect(opened.status).toBe(200);
    expect(opened.body.messages.map((m: { content: string }) => m.content)).toEqual(['Hello', 'Hi.']);
    expectError(await http.get(`/api/sessions/${listed.id}`, { token: stranger.user.token }), 'SESSION_NOT_FOUND', 404);
    expectError(
      await http.post(`/api/sessions/${listed.id}/messages`, { content: 'x' }, { token: stranger.user.token }),
      'SESSION_NOT_FOUND',
      404,
    );
    expectError(
      await http.delete(`/api/sessions/${listed.id}`, { token: stranger.user.token }),
      'SESSION_NOT_FOUND',
      404,
    );
    model.script({ text: 'Again.' });
    const byId = await http.post(`/api/sessions/${listed.id}/messages`, { content: 'More' }, { token: user.token });
    expect(byId.body.message).toMatchObject({ content: 'Again.' });
    expect((await http.delete(`/api/sessions/${more[0]}`, { token: user.token })).status).toBe(204);
    const after = await http.get('/api/sessions', { token: user.token });
    expect(after.body.items.map((s: { title: string; messageCount: number }) => [s.title, s.messageCount])).toEqual([
      ['Third', 0],
      ['Notes', 4],
    ]);
  });

  it('GET /sessions refuses a null, wrong-type or foreign query with VALIDATION_ERROR', async () => {
    const { user } = await session();
    for (const query of [
      'limit=null',
      'limit=abc',
      'limit=0',
      'limit=201',
      'limit=1.5',
      'cursor=nope',
      'cursor=a&cursor=b',
    ]) {
      expectError(await http.get(`/api/sessions?${query}`, { token: user.token }), 'VALIDATION_ERROR', 400);
    }
    expectError(await http.get('/api/sessions'), 'UNAUTHORIZED', 401);
  });

  it('a workspace lists only its sessions, and personal ones only without X-Workspace-Id', async () => {
    const owner = await registerUser(http);
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team', credits: 100_000 }, { token: admin.token });
    const member = await registerUser(http);
    const ws = (await http.post('/api/workspaces', { name: 'Chats' }, { token: owner.token })).body.id as string;
    await joinWorkspace(http, ws, owner.token, member, 'viewer');
    const inWs = (token: string) => ({ token, headers: { 'x-workspace-id': ws } });
    const wsSite = (await http.post('/api/vault/sites', { url: site.url }, inWs(owner.token))).body.id as string;
    const personalSite = (await http.post('/api/vault/sites', { url: site.url }, { token: owner.token })).body.id;
    const inWorkspace = await http.post('/api/sessions', { sites: [{ siteId: wsSite }] }, inWs(owner.token));
    const personal = await http.post('/api/sessions', { sites: [{ siteId: personalSite }] }, { token: owner.token });
    const ids = async (options: { token: string; headers?: Record<string, string> }) =>
      (await http.get('/api/sessions', options)).body.items.map((s: { id: string }) => s.id);
    expect(await ids(inWs(owner.token))).toEqual([inWorkspace.body.id]);
    expect(await ids({ token: owner.token })).toEqual([personal.body.id]);
    // A fellow member (a viewer may list) never sees the owner's sessions in the same workspace.
    expect(await ids(inWs(member.token))).toEqual([]);
    const stranger = await registerUser(http);
    expectError(await http.get('/api/sessions', inWs(stranger.token)), 'WORKSPACE_NOT_FOUND', 404);
  });
});

describe('chat timeout (e2e)', () => {
  it('a stalled model ends the turn with CHAT_TIMEOUT at the cap, aborting the model request', async () => {
    const sites = await testSites();
    const site = await sites.start();
    const model = await FakeModel.start();
    const stack = await Stack.start({
      worker: false,
      env: {
        ...siteEnv(sites, [site]),
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: model.url,
        CHAT_TIMEOUT_MS: '2000',
      },
    });
    try {
      const http = new Http(stack.baseUrl);
      const user = await registerUser(http);
      const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id;
      const token = (await http.post('/api/sessions', { sites: [{ siteId }] }, { token: user.token })).body.token;
      model.script({ stall: true });
      const started = Date.now();
      const answer = await http.post(`/api/sessions/${token}/messages`, { content: 'hello?' }, { token: user.token });
      const elapsed = Date.now() - started;
      expectError(answer, 'CHAT_TIMEOUT', 504);
      expect(elapsed).toBeGreaterThanOrEqual(2000);
      expect(elapsed).toBeLessThan(3000);
      await eventually(
        'the stalled model request to be aborted',
        async () => (model.requests[0]?.aborted ? true : undefined),
        5_000,
      );
      expect((await http.get(`/api/sessions/${token}`, { token: user.token })).body.messages).toEqual([]);
      model.script({ stall: true });
      const streamed = await streamTurn(stack.baseUrl, user.token, token, 'again?');
      expect(streamed.events.map((e) => e.event)).toEqual(['error']);
      expect(streamed.events[0]!.data).toMatchObject({ code: 'CHAT_TIMEOUT', statusCode: 504 });
    } finally {
      await stack.stop();
      await model.stop();
      await sites.stopAll();
    }
  });
});
