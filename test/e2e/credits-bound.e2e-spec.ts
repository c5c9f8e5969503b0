import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { toolNamed } from '../fixtures/fake-model.js';
import type { FakeModel } from '../fixtures/fake-model.js';
import { behindBalanceLock, creditsOn } from '../utils/credits.js';
import { ownDataSource } from '../utils/db.js';
import { partsOfStream, partSummary, streamTurn } from '../utils/chat.js';
import { expectError, type Http, type HttpAnswer } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import type { Stack } from '../utils/stack.js';
import { startWorld, type World } from '../utils/world.js';
import { connectSite, registerUserWith, type TestUser } from '../utils/users.js';

/**
 * Credits bound what a user spends on the model: no model call starts unless the owner's balance,
 * less what their other calls in flight hold, covers it (chat and runs alike); a user's chat turns in
 * progress and a turn's input are capped.
 */
describe('credits bound model spending (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;

  beforeAll(async () => {
    world = await startWorld({ env: { MAX_CHAT_INPUT_BYTES: '20000' } });
    ({ site, model, stack, http, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  /** A user with `credits`, the reference site connected, and a chat session over one of its tools. */
  async function chatUser(credits: number): Promise<{ user: TestUser; session: string }> {
    const user = await registerUserWith(http, admin, { credits });
    const siteId = await connectSite(http, { token: user.token }, site);
    // One small tool: the call's estimated cost is one credit.
    const created = await http.post(
      '/api/sessions',
      { sites: [{ siteId, tools: ['list_notes'] }] },
      { token: user.token },
    );
    expect(created.status).toBe(201);
    return { user, session: created.body.token };
  }

  async function balanceOf(user: TestUser): Promise<number> {
    return (await http.get<{ credits: number }>('/api/me', { token: user.token })).body.credits;
  }

  it('holds are decided atomically in PostgreSQL: ten reservations at once against one credit, one passes', async () => {
    const user = await registerUserWith(http, admin, { credits: 1 });
    const dataSource = await ownDataSource(stack, 12);
    try {
      const credits = creditsOn(dataSource);
      const keys = Array.from({ length: 10 }, () => `chat:${randomUUID()}:1`);
      // All ten truly at once, behind another transaction's lock of the balance's row.
      const answers = await behindBalanceLock(
        dataSource,
        user.id,
        keys.map((key) => () => credits.hold(user.id, key, 1, 60_000)),
      );
      expect(answers.filter((a) => a.reserved)).toHaveLength(1);
      const winner = keys[answers.findIndex((a) => a.reserved)]!;
      // The same key again (a retried call) keeps its own hold; any other is still refused.
      expect((await credits.hold(user.id, winner, 1, 60_000)).reserved).toBe(true);
      expect((await credits.hold(user.id, `chat:${randomUUID()}:1`, 1, 60_000)).reserved).toBe(false);
      // The charge with the hold's reference releases it: the balance is then 0, and 0 covers nothing.
      expect(await credits.charge(user.id, 1, 'chat_turn', winner, undefined)).toEqual({ charged: 1, balance: 0 });
      expect(await dataSource.query('SELECT key FROM credit_holds WHERE user_id = $1', [user.id])).toEqual([]);
      await http.patch(`/api/admin/users/${user.id}`, { credits: 2 }, { token: admin.token });
      // The hold's message carries its values as literals: a key with quotes and backslashes is a key.
      const odd = `chat:'); DELETE FROM credit_holds; --\\'${randomUUID()}`;
      expect((await credits.hold(user.id, odd, 1, 60_000)).reserved).toBe(true);
      expect(await dataSource.query('SELECT key FROM credit_holds WHERE user_id = $1', [user.id])).toEqual([
        { key: odd },
      ]);
      await credits.release(user.id, odd);
      // An expired hold (its process died) holds nothing.
      expect((await credits.hold(user.id, `chat:${randomUUID()}:1`, 2, 1)).reserved).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await credits.hold(user.id, `chat:${randomUUID()}:1`, 2, 60_000)).reserved).toBe(true);
    } finally {
      await dataSource.destroy();
    }
  });

  it("charges are decided under the balance's lock in one message: ten at once against 25 credits take 25, each reference once", async () => {
    const user = await registerUserWith(http, admin, { credits: 25 });
    const dataSource = await ownDataSource(stack, 12);
    try {
      const credits = creditsOn(dataSource);
      const keys = Array.from({ length: 10 }, () => `chat:${randomUUID()}:1`);
      // Each with its hold, which its charge releases.
      for (const key of keys) {
        expect((await credits.hold(user.id, key, 1, 60_000)).reserved).toBe(true);
      }
      // All ten at once behind another transaction's lock of the balance's row, as in the hold's test.
      const charges = await behindBalanceLock(
        dataSource,
        user.id,
        keys.map((key) => () => credits.charge(user.id, 3, 'chat_turn', key)),
      );
      // One after the other: eight take 3, one the last 1, one nothing; each answers the balance it left.
      expect(charges.map((c) => c.charged).sort((a, b) => b - a)).toEqual([3, 3, 3, 3, 3, 3, 3, 3, 1, 0]);
      expect(charges.map((c) => c.balance).sort((a, b) => b - a)).toEqual([22, 19, 16, 13, 10, 7, 4, 1, 0, 0]);
      expect(await balanceOf(user)).toBe(0);
      expect(await dataSource.query('SELECT key FROM credit_holds WHERE user_id = $1', [user.id])).toEqual([]);
      // The ledger adds up to the balance: the grant, then each charge with the balance it left.
      const ledger: Array<{ delta: string; balance_after: string; reference: string | null }> = await dataSource.query(
        'SELECT delta, balance_after, reference FROM credit_ledger WHERE user_id = $1 ORDER BY id',
        [user.id],
      );
      expect(ledger.reduce((sum, row) => sum + Number(row.delta), 0)).toBe(0);
      expect(ledger.slice(-10).map((row) => Number(row.balance_after))).toEqual([22, 19, 16, 13, 10, 7, 4, 1, 0, 0]);
      // A retried charge (the same reference) writes nothing and answers the first one's amount.
      await http.patch(`/api/admin/users/${user.id}`, { credits: 5 }, { token: admin.token });
      const first = charges.find((c) => c.charged === 3)!;
      const retried = keys[charges.indexOf(first)]!;
      expect(await credits.charge(user.id, 3, 'chat_turn', retried)).toEqual({ charged: 3, balance: 5 });
      expect(await balanceOf(user)).toBe(5);
      // A reference with quotes and backslashes is a reference (the message carries literals).
      const odd = `chat:'); UPDATE users SET credits = 1000; --\\'${randomUUID()}`;
      expect(await credits.charge(user.id, 2, 'chat_turn', odd)).toEqual({ charged: 2, balance: 3 });
      expect(await dataSource.query('SELECT delta FROM credit_ledger WHERE reference = $1', [odd])).toEqual([
        { delta: '-2' },
      ]);
      await expect(credits.charge(randomUUID(), 1, 'chat_turn')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await dataSource.destroy();
    }
  });

  it('concurrent chat turns of a user with one credit make one model call, and only one is charged', async () => {
    const { user, session } = await chatUser(1);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    model.fallback = { text: 'Slow answer.', gate };
    try {
      const turns = Array.from({ length: 4 }, () =>
        http.post(`/api/sessions/${session}/messages`, { content: 'Hello?' }, { token: user.token }),
      );
      // The first turn reaches the model and waits there while the others are decided.
      await eventually('one model call', async () => (model.requests.length > 0 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      release();
      const answers = await Promise.all(turns);
      expect(model.requests).toHaveLength(1);
      const codes = answers.map((a) => (a.status === 200 ? 'ok' : (a.body as { code: string }).code));
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
      expect(codes.filter((c) => c !== 'ok' && c !== 'NO_CREDITS' && c !== 'RATE_LIMITED')).toEqual([]);
      expect(await balanceOf(user)).toBe(0);
    } finally {
      release();
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });

  it('a turn past MAX_CONCURRENT_CHAT_TURNS in progress is RATE_LIMITED with Retry-After; a slot frees when a turn ends', async () => {
    const { user, session } = await chatUser(100);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    model.fallback = { text: 'Slow answer.', gate };
    try {
      const first = [1, 2].map(() =>
        http.post(`/api/sessions/${session}/messages`, { content: 'Hello?' }, { token: user.token }),
      );
      await eventually('two model calls', async () => (model.requests.length === 2 ? true : undefined));
      const third = await http.post(
        `/api/sessions/${session}/messages`,
        { content: 'A third?' },
        { token: user.token },
      );
      expectError(third, 'RATE_LIMITED', 429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(model.requests).toHaveLength(2);
      release();
      expect((await Promise.all(first)).map((a) => a.status)).toEqual([200, 200]);
      const after = await http.post(`/api/sessions/${session}/messages`, { content: 'Now?' }, { token: user.token });
      expect(after.status).toBe(200);
    } finally {
      release();
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });

  it('a turn refused for its session answers that refusal, even with every slot taken, and gives its slot back', async () => {
    const { user, session } = await chatUser(100);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    model.fallback = { text: 'Slow answer.', gate };
    const unknown = (): Promise<HttpAnswer> =>
      http.post(`/api/sessions/${randomUUID()}/messages`, { content: 'Anyone?' }, { token: user.token });
    try {
      const first = http.post(`/api/sessions/${session}/messages`, { content: 'Hello?' }, { token: user.token });
      await eventually('one model call', async () => (model.requests.length === 1 ? true : undefined));
      // Each takes the second slot while its session is read: held, the turn below would be RATE_LIMITED.
      for (let i = 0; i < 2; i += 1) {
        expectError(await unknown(), 'SESSION_NOT_FOUND', 404);
      }
      const second = http.post(`/api/sessions/${session}/messages`, { content: 'Again?' }, { token: user.token });
      await eventually('two model calls', async () => (model.requests.length === 2 ? true : undefined));
      expectError(await unknown(), 'SESSION_NOT_FOUND', 404);
      release();
      expect((await Promise.all([first, second])).map((a) => a.status)).toEqual([200, 200]);
    } finally {
      release();
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });

  it('a turn whose balance runs out mid-way ends with NO_CREDITS in the stream and saves its reply so far, marked as cut', async () => {
    const { user, session } = await chatUser(1);
    site.createNote('alice', 'Groceries', 'milk');
    model.script((req) => ({ text: 'Looking.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'Never sent: the balance is spent.',
    });
    const { status, events } = await streamTurn(stack.baseUrl, user.token, session, 'My notes?');
    expect(status).toBe(200);
    expect(model.requests).toHaveLength(1);
    const kinds = events.map((e) => e.event).filter((e, i, all) => e !== 'text' || all[i - 1] !== 'text');
    expect(kinds).toEqual(['text', 'tool_call', 'tool_result', 'error']);
    expect(events.at(-1)!.data).toMatchObject({ code: 'NO_CREDITS', statusCode: 402 });
    const saved = await http.get<{ messages: Array<Record<string, any>> }>(`/api/sessions/${session}`, {
      token: user.token,
    });
    expect(saved.body.messages.map((m) => [m.role, m.content, m.cut])).toEqual([
      ['user', 'My notes?', undefined],
      ['assistant', 'Looking.', true],
    ]);
    expect(saved.body.messages[1]!.toolCalls).toMatchObject([{ tool: 'list_notes', ok: true }]);
    // The cut reply keeps its parts as the stream showed them: the text, then the tool call.
    expect(saved.body.messages[1]!.parts.map(partSummary)).toEqual(['text: Looking.', 'tool_call: list_notes ok']);
    expect(saved.body.messages[1]!.parts).toEqual(partsOfStream(events));
    expect(saved.body.messages[1]!.usage).toMatchObject({ credits: 1 });
    // Topped up, the session goes on: the next turn's conversation ends with the tool result and the
    // new message joined to it (the roles alternate).
    await http.patch(`/api/admin/users/${user.id}`, { credits: 10 }, { token: admin.token });
    model.reset();
    model.script({ text: 'You have a note about groceries.' });
    const next = await http.post(`/api/sessions/${session}/messages`, { content: 'And?' }, { token: user.token });
    expect(next.status).toBe(200);
    expect(next.body.message).toMatchObject({ content: 'You have a note about groceries.', cut: false });
    const sent = model.requests[0]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[2]!.content).toMatchObject([{ type: 'tool_result' }, { type: 'text', text: 'And?' }]);
  });

  it('a turn that passes MAX_CHAT_INPUT_BYTES after a tool call is cut there and keeps its parts as streamed', async () => {
    const user = await registerUserWith(http, admin, { credits: 100 });
    // Another user of the site, whose one long note takes the next call over the 20000 bytes.
    const siteId = await connectSite(http, { token: user.token }, site, 'root');
    const session = (
      await http.post('/api/sessions', { sites: [{ siteId, tools: ['list_notes'] }] }, { token: user.token })
    ).body.token as string;
    site.createNote('root', 'Long', 'x'.repeat(21_000));
    model.script((req) => ({ text: 'Reading them.', toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), {
      text: 'Never sent: the conversation is too long.',
    });
    const { events } = await streamTurn(stack.baseUrl, user.token, session, 'Read my notes');
    expect(model.requests).toHaveLength(1);
    expect(events.at(-1)!.data).toMatchObject({ code: 'VALIDATION_ERROR', statusCode: 400 });
    const saved = await http.get<{ messages: Array<Record<string, any>> }>(`/api/sessions/${session}`, {
      token: user.token,
    });
    const reply = saved.body.messages[1]!;
    expect(reply).toMatchObject({ role: 'assistant', content: 'Reading them.', cut: true });
    expect(reply.parts.map(partSummary)).toEqual(['text: Reading them.', 'tool_call: list_notes ok']);
    expect(reply.parts).toEqual(partsOfStream(events));
  });

  it('a turn whose conversation is over MAX_CHAT_INPUT_BYTES is refused before the model is called, nothing saved', async () => {
    const { user, session } = await chatUser(100);
    const answer = await http.post(
      `/api/sessions/${session}/messages`,
      { content: 'x'.repeat(25_000) },
      { token: user.token },
    );
    expectError(answer, 'VALIDATION_ERROR', 400);
    expect(answer.body.error).toMatch(/over the 20000/);
    expect(model.requests).toHaveLength(0);
    const saved = await http.get<{ messages: unknown[] }>(`/api/sessions/${session}`, { token: user.token });
    expect(saved.body.messages).toEqual([]);
  });

  it("concurrent runs of one user's agents with one credit make one model call; the others fail NO_CREDITS", async () => {
    const user = await registerUserWith(http, admin, { tier: 'harness', credits: 1 });
    const agents: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = await http.post(
        '/api/agents',
        { name: `Agent ${i}`, systemPrompt: 'Say hi.', siteIds: [], trigger: { type: 'manual' } },
        { token: user.token },
      );
      expect(created.status).toBe(201);
      agents.push(created.body.id);
    }
    model.fallback = { text: 'Hi.', delayMs: 1500 };
    try {
      const started = await Promise.all(
        agents.map((id) => http.post(`/api/agents/${id}/runs`, {}, { token: user.token })),
      );
      expect(started.map((s) => s.status)).toEqual([201, 201, 201]);
      const ended = await Promise.all(started.map((s) => waitForRun(http, user.token, s.body.id)));
      expect(model.requests).toHaveLength(1);
      expect(ended.map((r) => r.status).sort()).toEqual(['completed', 'failed', 'failed']);
      expect(ended.filter((r) => r.status === 'failed').map((r) => r.error?.code)).toEqual([
        'NO_CREDITS',
        'NO_CREDITS',
      ]);
      expect(await balanceOf(user)).toBe(0);
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
    }
  });
});
