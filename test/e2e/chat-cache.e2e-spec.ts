import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { ChatRepository } from '../../src/chat/chat.repository.js';
import type { FakeModel } from '../fixtures/fake-model.js';
import { streamTurn } from '../utils/chat.js';
import { ownDataSource, sql } from '../utils/db.js';
import { expectError, type Http } from '../utils/http.js';
import type { Stack } from '../utils/stack.js';
import { connectSite, registerUserWith, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/**
 * A session's next turn in the process that served its last one uses the context kept from it: the
 * slot, the check of what the context was read from and the first call's hold go in one message. Every
 * change the check covers makes the turn read the context again; a turn refused leaves no hold and
 * no slot behind.
 */
describe('chat turn context kept between turns (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;

  beforeAll(async () => {
    world = await startWorld({ worker: false, env: { MAX_CONCURRENT_CHAT_TURNS: '2' } });
    ({ site, model, stack, http, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  async function chatUser(credits = 1_000): Promise<{ user: TestUser; session: string; id: string; siteId: string }> {
    const user = await registerUserWith(http, admin, { credits });
    const siteId = await connectSite(http, { token: user.token }, site);
    const created = await http.post('/api/sessions', { sites: [{ siteId }] }, { token: user.token });
    expect(created.status).toBe(201);
    return { user, session: created.body.token, id: created.body.id, siteId };
  }

  async function turn(user: TestUser, session: string, content: string): Promise<number> {
    model.script({ text: `Answer to ${content}.` });
    return (await http.post(`/api/sessions/${session}/messages`, { content }, { token: user.token })).status;
  }

  /** The texts the last model request was sent, a message's text blocks joined, in order. */
  function lastSent(): string[] {
    return model.requests
      .at(-1)!
      .body.messages.map((m) =>
        typeof m.content === 'string'
          ? m.content
          : (m.content as Array<{ type: string; text?: string }>)
              .map((b) => (b.type === 'text' ? b.text : JSON.stringify(b)))
              .join(''),
      );
  }

  /** What a user's turns left in PostgreSQL: credit holds and turn slots. */
  async function leftOf(user: TestUser): Promise<{ holds: number; slots: number }> {
    const [row] = await sql<{ holds: number; slots: number }>(
      'SELECT (SELECT count(*) FROM credit_holds WHERE user_id = $1)::int AS holds, ' +
        '(SELECT count(*) FROM chat_turn_slots WHERE user_id = $1)::int AS slots',
      [user.id],
    );
    return row!;
  }

  it('the next turn uses the context kept; a turn another process saved makes it read the session again', async () => {
    const { user, session, id } = await chatUser();
    expect(await turn(user, session, 'one')).toBe(200);
    expect(await turn(user, session, 'two')).toBe(200);
    expect(lastSent()).toEqual(['one', 'Answer to one.', 'two']);
    // An edit the check does not cover (the service never edits a message): the kept context does not
    // see it, which shows the turn did not read the session.
    await sql("UPDATE chat_messages SET content = 'one, edited' WHERE session_id = $1 AND content = 'one'", [id]);
    expect(await turn(user, session, 'three')).toBe(200);
    expect(lastSent()).toEqual(['one', 'Answer to one.', 'two', 'Answer to two.', 'three']);

    // Another process of the service saves a turn of the same session.
    const dataSource = await ownDataSource(stack, 1);
    try {
      await new ChatRepository(dataSource).saveTurn({
        sessionId: id,
        content: 'elsewhere',
        reply: {
          id: randomUUID(),
          content: 'Answered elsewhere.',
          toolCalls: [],
          modelMessages: [{ role: 'assistant', content: 'Answered elsewhere.' }],
          parts: [{ type: 'text', text: 'Answered elsewhere.' }],
          usage: null,
          cut: false,
        },
      });
    } finally {
      await dataSource.destroy();
    }
    expect(await turn(user, session, 'four')).toBe(200);
    expect(lastSent()).toEqual([
      'one, edited',
      'Answer to one.',
      'two',
      'Answer to two.',
      'three',
      'Answer to three.',
      'elsewhere',
      'Answered elsewhere.',
      'four',
    ]);
    // The turns that used the kept context saved theirs as every turn does.
    const stored = await http.get<{ messages: Array<{ content: string }> }>(`/api/sessions/${session}`, {
      token: user.token,
    });
    expect(stored.body.messages.map((m) => m.content).slice(-2)).toEqual(['four', 'Answer to four.']);
    expect(await leftOf(user)).toEqual({ holds: 0, slots: 0 });
  });

  it("a change of the session's site is seen by the next turn; a deleted session is SESSION_NOT_FOUND with nothing left held", async () => {
    const { user, session, siteId } = await chatUser();
    expect(await turn(user, session, 'tools?')).toBe(200);
    const toolsSent = (): string[] => (model.requests.at(-1)!.body.tools ?? []).map((t) => t.name);
    expect(toolsSent().some((name) => name.endsWith('create_note'))).toBe(true);
    // The site's manifest refreshed without one of its tools.
    await sql(
      "UPDATE sites SET manifest = jsonb_set(manifest, '{tools}', (SELECT jsonb_agg(t) " +
        "FROM jsonb_array_elements(manifest->'tools') t WHERE t->>'name' <> 'create_note')) WHERE id = $1",
      [siteId],
    );
    expect(await turn(user, session, 'tools now?')).toBe(200);
    expect(toolsSent().length).toBeGreaterThan(0);
    expect(toolsSent().some((name) => name.endsWith('create_note'))).toBe(false);

    const calls = model.requests.length;
    expect((await http.delete(`/api/sessions/${session}`, { token: user.token })).status).toBe(204);
    expectError(
      await http.post(`/api/sessions/${session}/messages`, { content: 'gone?' }, { token: user.token }),
      'SESSION_NOT_FOUND',
      404,
    );
    expect(model.requests).toHaveLength(calls);
    expect(await leftOf(user)).toEqual({ holds: 0, slots: 0 });
  });

  it('a turn of a kept context finding every slot taken is RATE_LIMITED and leaves no hold', async () => {
    const { user, session } = await chatUser();
    expect(await turn(user, session, 'first')).toBe(200);
    // Two turns of the user in progress elsewhere (MAX_CONCURRENT_CHAT_TURNS is 2 here).
    await sql(
      "INSERT INTO chat_turn_slots (user_id, slot, turn, expires_at) VALUES ($1, 1, $2, now() + interval '1 minute'), " +
        "($1, 2, $3, now() + interval '1 minute')",
      [user.id, randomUUID(), randomUUID()],
    );
    const refused = await http.post(`/api/sessions/${session}/messages`, { content: 'busy?' }, { token: user.token });
    expectError(refused, 'RATE_LIMITED', 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await leftOf(user)).toEqual({ holds: 0, slots: 2 });
    // One of them ends: the next turn takes its slot, uses the kept context, and gives the slot back.
    await sql('DELETE FROM chat_turn_slots WHERE user_id = $1 AND slot = 1', [user.id]);
    expect(await turn(user, session, 'now?')).toBe(200);
    expect(lastSent()).toEqual(['first', 'Answer to first.', 'now?']);
    expect(await leftOf(user)).toEqual({ holds: 0, slots: 1 });
  });

  it("a kept context's first call refused by its hold ends the stream with NO_CREDITS, saves nothing, and frees its slot", async () => {
    const { user, session, id } = await chatUser(3);
    expect(await turn(user, session, 'short')).toBe(200); // one credit: two left
    const calls = model.requests.length;
    // About 3,000 estimated tokens: three credits to hold, more than the balance.
    const { status, events } = await streamTurn(stack.baseUrl, user.token, session, 'x'.repeat(12_000));
    expect(status).toBe(200);
    expect(events.map((e) => e.event)).toEqual(['error']);
    expect(events[0]!.data).toMatchObject({ code: 'NO_CREDITS', statusCode: 402 });
    expect(events[0]!.data.error).toMatch(/needs \d+ credits, 2 available/);
    expect(model.requests).toHaveLength(calls);
    const [saved] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM chat_messages WHERE session_id = $1', [
      id,
    ]);
    expect(saved!.n).toBe(2);
    expect(await leftOf(user)).toEqual({ holds: 0, slots: 0 });
  });
});
