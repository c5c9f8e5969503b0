import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { droppedNote } from '../../src/chat/chat-context.js';
import { type RecordedRequest, toolNamed } from '../fixtures/fake-model.js';
import { streamTurn, type SseEvent } from '../utils/chat.js';
import type { Http } from '../utils/http.js';
import type { Stack } from '../utils/stack.js';
import { registerUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';
import type { FakeModel } from '../fixtures/fake-model.js';

/** The budget the service is given, in tokens, and in bytes of request (3 bytes a token). */
const BUDGET_TOKENS = 80_000;
const BUDGET_BYTES = BUDGET_TOKENS * 3;
/** The fake model's context: a request over it is refused as "prompt is too long". */
const MODEL_CONTEXT_BYTES = 320_000;
const TURNS = 200;
const NOTE_BYTES = 60_000;

/** The user's message of turn `n`: long enough that placeholders alone cannot keep 200 exchanges in. */
function question(n: number): string {
  return `question ${n}: ${'q'.repeat(1000)}`;
}

describe('a long chat session (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;

  beforeAll(async () => {
    world = await startWorld({
      worker: false,
      env: {
        CHAT_CONTEXT_BUDGET_TOKENS: String(BUDGET_TOKENS),
        SIGNUP_CREDITS: '1000000',
        OUTGOING_CALLS_PER_MINUTE: '100000',
        SITE_ALLOW_PRIVATE_HOSTS: 'localhost',
      },
    });
    ({ model, stack, http } = world);
    // A site of its own: the world's allows a token 60 calls a minute, fewer than this test makes.
    site = await world.sites.start({ limitPerToken: 100_000, limitPerIp: 100_000 });
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  it(`${TURNS} turns whose tools answer ${NOTE_BYTES / 1000} KB each: every turn answers, the model is sent at most the budget, the stream says when context was condensed, and the session keeps every turn`, async () => {
    const user = await registerUser(http);
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id;
    await http.post(
      `/api/vault/sites/${siteId}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const token = (await http.post('/api/sessions', { sites: [{ siteId }] }, { token: user.token })).body.token;
    const note = site.createNote('alice', 'Long', 'n'.repeat(NOTE_BYTES));
    model.maxRequestBytes = MODEL_CONTEXT_BYTES;
    // Each turn: the model reads the note, then answers; a request that ends with the tool's result is
    // the second call of a turn.
    model.fallback = (req: RecordedRequest) => {
      const last = req.body.messages[req.body.messages.length - 1]!;
      const results =
        Array.isArray(last.content) && last.content.some((b: { type: string }) => b.type === 'tool_result');
      return results
        ? { text: `Answer ${req.body.messages.length}.` }
        : { toolUses: [{ name: toolNamed(req, 'get_note'), input: { id: note.id } }] };
    };
    const contexts: Array<{ turn: number; data: SseEvent['data'] }> = [];
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const { status, events } = await streamTurn(stack.baseUrl, user.token, token, question(turn));
      expect(status).toBe(200);
      const kinds = events.map((e) => e.event);
      if (kinds[kinds.length - 1] !== 'done') {
        throw new Error(`turn ${turn} ended with ${JSON.stringify(events[events.length - 1])}`);
      }
      // A `context` event comes before the model call it concerns: the turn's first, or its second.
      const shape = kinds.filter((k, i) => k !== 'text' || kinds[i - 1] !== 'text').join(' ');
      expect(shape).toMatch(/^(context )?tool_call tool_result (context )?text done$/);
      expect(events.find((e) => e.event === 'tool_result')!.data.ok).toBe(true);
      // The last one of the turn: its second call (with the tool's answer) may condense more.
      const context = events.filter((e) => e.event === 'context').pop();
      if (context !== undefined) {
        contexts.push({ turn, data: context.data });
      }
    }
    expect(model.requests).toHaveLength(2 * TURNS);
    expect(model.requests.every((r) => r.bytes <= BUDGET_BYTES)).toBe(true);
    // Early turns fit whole; then old results gave way, then old exchanges too.
    expect(contexts[0]!.turn).toBeGreaterThan(1);
    expect(contexts[0]!.data).toMatchObject({ condensed: true, droppedTurns: 0, budgetTokens: BUDGET_TOKENS });
    expect(contexts[0]!.data.omittedResults).toBeGreaterThan(0);
    const last = contexts[contexts.length - 1]!;
    expect(last.turn).toBe(TURNS);
    expect(last.data.droppedTurns).toBeGreaterThan(0);
    expect(last.data.estimatedTokens).toBeLessThanOrEqual(BUDGET_TOKENS);

    // The last turn's second call: the dropped exchanges' note first, the recent results whole, the new
    // message and its tool's answer last.
    const final = model.requests[model.requests.length - 1]!.body.messages;
    expect(final[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: droppedNote(last.data.droppedTurns) },
        { type: 'text', text: question(last.data.droppedTurns + 1) },
      ],
    });
    expect(final[final.length - 3]).toEqual({ role: 'user', content: question(TURNS) });
    const shown = final.flatMap((m) =>
      Array.isArray(m.content) ? m.content.filter((b: { type: string }) => b.type === 'tool_result') : [],
    ) as Array<{ content: string }>;
    expect(shown.filter((b) => b.content.includes('n'.repeat(NOTE_BYTES)))).toHaveLength(3);
    expect(shown.some((b) => /^\[tool result of \d+ KB omitted: .*get_note\]$/.test(b.content))).toBe(true);

    // The session answers every turn whole, as before.
    const stored = await http.get(`/api/sessions/${token}`, { token: user.token });
    expect(stored.status).toBe(200);
    expect(stored.body.messages).toHaveLength(2 * TURNS);
    expect(stored.body.messages[0]).toMatchObject({ role: 'user', content: question(1) });
    const replies = stored.body.messages.filter((m: { role: string }) => m.role === 'assistant');
    expect(
      replies.every(
        (m: { toolCalls: Array<{ result: { body: string } }> }) => m.toolCalls[0]!.result.body.length === NOTE_BYTES,
      ),
    ).toBe(true);

    // A turn answered in JSON says it too.
    const answer = await http.post(
      `/api/sessions/${token}/messages`,
      { content: 'and in JSON?' },
      { token: user.token },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.context).toMatchObject({ condensed: true, budgetTokens: BUDGET_TOKENS });
    expect(answer.body.context.droppedTurns).toBeGreaterThan(0);
  }, 240_000);
});
