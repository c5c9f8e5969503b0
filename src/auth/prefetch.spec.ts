import { describe, expect, it, jest } from '@jest/globals';
import { Reflector } from '@nestjs/core';
import type { ApiRequest } from '../common/http.js';
import { ChatController } from '../chat/chat.controller.js';
import { CHAT_TURN_PREFETCH } from '../chat/chat-turn.service.js';
import { AuthenticatedPrefetch, PREFETCH_ON_AUTH, type Prefetcher } from './prefetch.js';

const routeKey = (handler: (...args: never[]) => unknown): symbol | undefined =>
  new Reflector().get<symbol | undefined>(PREFETCH_ON_AUTH, handler);

describe('prefetch declared on the route', () => {
  it('the chat turn route, and no other chat route, declares the turn prefetch', () => {
    expect(routeKey(ChatController.prototype.send)).toBe(CHAT_TURN_PREFETCH);
    for (const other of [
      ChatController.prototype.create,
      ChatController.prototype.get,
      ChatController.prototype.remove,
    ]) {
      expect(routeKey(other)).toBeUndefined();
    }
  });

  it("starts only the matched route's prefetcher, and none for a route that declares none", () => {
    const prefetch = new AuthenticatedPrefetch();
    const turn = jest.fn<Prefetcher>();
    const other = jest.fn<Prefetcher>();
    const otherKey = Symbol('other');
    prefetch.register(CHAT_TURN_PREFETCH, turn);
    prefetch.register(otherKey, other);

    const plain = { params: {} } as unknown as ApiRequest;
    prefetch.forRoute(plain, undefined);
    prefetch.start(plain, 'user-1');
    expect(turn).not.toHaveBeenCalled();
    expect(other).not.toHaveBeenCalled();

    const chatTurn = { params: { token: 'ses_x' } } as unknown as ApiRequest;
    prefetch.forRoute(chatTurn, routeKey(ChatController.prototype.send));
    prefetch.start(chatTurn, 'user-1');
    expect(turn).toHaveBeenCalledWith(chatTurn, 'user-1');
    expect(other).not.toHaveBeenCalled();
  });
});
