import { describe, expect, it } from '@jest/globals';
import type { ModelMessage } from '../../workflows/contracts.js';
import { WHOLE_HISTORY_MESSAGES } from './chat-context.js';
import type { TurnContext } from './chat-responses.js';
import type { ChatSessionEntity } from './chat.entities.js';
import { TURN_CONTEXT_CACHE_BYTES, TURN_CONTEXT_CACHE_ENTRIES, TurnContextCache } from './turn-context-cache.js';

function session(expiresInMs = 60_000): ChatSessionEntity {
  return {
    id: 'c0ffee00-0000-4000-8000-000000000001',
    userId: 'u',
    workspaceId: null,
    title: null,
    sites: [],
    expiresAt: new Date(Date.now() + expiresInMs),
  } as unknown as ChatSessionEntity;
}

const whole = (n: number): ModelMessage[] => [{ role: 'assistant', content: [{ type: 'text', text: `whole ${n}` }] }];
const brief = (n: number): ModelMessage[] => [{ role: 'assistant', content: [{ type: 'text', text: `brief ${n}` }] }];

/** A context as the turn read gives it: `pairs` exchanges, each reply with a brief of its own. */
function context(pairs: number): TurnContext {
  const history = Array.from({ length: pairs }, (_, i) => [
    { role: 'user' as const, content: `q${i}`, modelMessages: null, modelBrief: null },
    { role: 'assistant' as const, content: `a${i}`, modelMessages: whole(i), modelBrief: brief(i) },
  ]).flat();
  return { session: session(), sites: [], history };
}

function version(count: number, lastSeq: number) {
  return { session: '1|||', messages: `${count}:${lastSeq}`, sites: '' };
}

function saved(userSeq: number, n: number) {
  return {
    userSeq: String(userSeq),
    content: `q${n}`,
    reply: { seq: String(userSeq + 1), content: `a${n}`, modelMessages: whole(n), modelBrief: brief(n) },
  };
}

describe('TurnContextCache', () => {
  it('answers a context kept, and nothing for another key or once dropped', () => {
    const cache = new TurnContextCache();
    cache.put('k', context(1), version(2, 2));
    expect(cache.get('k')?.context.history.map((m) => m.content)).toEqual(['q0', 'a0']);
    expect(cache.get('k')?.version).toEqual(version(2, 2));
    expect(cache.get('other')).toBeUndefined();
    cache.drop('k');
    expect(cache.get('k')).toBeUndefined();
  });

  it('appends a saved turn after the messages kept, and moves the version with it', () => {
    const cache = new TurnContextCache();
    cache.put('k', context(1), version(2, 2));
    cache.saved('k', saved(7, 1));
    const kept = cache.get('k')!;
    expect(kept.context.history.map((m) => m.content)).toEqual(['q0', 'a0', 'q1', 'a1']);
    expect(kept.context.history[2]).toEqual({ role: 'user', content: 'q1', modelMessages: null });
    expect(kept.version).toEqual(version(4, 8));
  });

  it('drops the context when a saved turn does not come after every message kept', () => {
    const cache = new TurnContextCache();
    cache.put('k', context(1), version(2, 10));
    cache.saved('k', saved(9, 1));
    expect(cache.get('k')).toBeUndefined();
  });

  it('sends a reply as its brief once it is older than the newest WHOLE_HISTORY_MESSAGES, as the turn read does', () => {
    const cache = new TurnContextCache();
    const pairs = WHOLE_HISTORY_MESSAGES / 2;
    cache.put('k', context(pairs), version(WHOLE_HISTORY_MESSAGES, WHOLE_HISTORY_MESSAGES));
    expect(cache.get('k')!.context.history[1]!.modelMessages).toEqual(whole(0));
    cache.saved('k', saved(WHOLE_HISTORY_MESSAGES + 1, pairs));
    const history = cache.get('k')!.context.history;
    expect(history).toHaveLength(WHOLE_HISTORY_MESSAGES + 2);
    expect(history[1]!.modelMessages).toEqual(brief(0));
    expect(history[3]!.modelMessages).toEqual(whole(1));
    expect(history.at(-1)!.modelMessages).toEqual(whole(pairs));
  });

  it('forgets an expired session', () => {
    const cache = new TurnContextCache();
    cache.put('k', { ...context(1), session: session(-1) }, version(2, 2));
    expect(cache.get('k')).toBeUndefined();
    expect(cache.has('k')).toBe(false);
    // Asked only whether it is kept (the turn's read-ahead is skipped for a kept one): not once expired.
    cache.put('k2', { ...context(1), session: session(-1) }, version(2, 2));
    expect(cache.has('k2')).toBe(false);
  });

  it('keeps at most TURN_CONTEXT_CACHE_ENTRIES, the least recently used going first', () => {
    const cache = new TurnContextCache();
    for (let i = 0; i < TURN_CONTEXT_CACHE_ENTRIES; i += 1) {
      cache.put(`k${i}`, context(0), version(0, 0));
    }
    cache.get('k0'); // used: k1 is now the least recently used
    cache.put('new', context(0), version(0, 0));
    expect(cache.has('k0')).toBe(true);
    expect(cache.has('k1')).toBe(false);
    expect(cache.has('new')).toBe(true);
  });

  it('keeps no context larger than an eighth of TURN_CONTEXT_CACHE_BYTES', () => {
    const cache = new TurnContextCache();
    const large = context(1);
    large.history[0]!.content = 'x'.repeat(TURN_CONTEXT_CACHE_BYTES / 8);
    cache.put('k', large, version(2, 2));
    expect(cache.has('k')).toBe(false);
  });
});
