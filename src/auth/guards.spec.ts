import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../common/app-error.js';
import type { ApiRateLimits } from '../common/rate-limit.js';
import { requestLogFields } from '../common/correlation.js';
import type { Settings } from '../config/settings.js';
import type { AuthUser } from './auth-user.js';
import { ConsoleSessions } from './console-session.js';
import { JwtAuthGuard } from './guards.js';
import type { JwtStrategy } from './jwt.strategy.js';
import { AuthenticatedPrefetch } from './prefetch.js';

class SomeController {
  route(): void {}
}

function contextFor(req: object): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => ({}) }),
    getHandler: () => SomeController.prototype.route,
    getClass: () => SomeController,
  } as unknown as ExecutionContext;
}

const admitted = { consume: () => Promise.resolve(new RateLimiterRes(99, 1000)) };

function guardWith(rememberedUser: JwtStrategy['rememberedUser'], perIp = admitted): JwtAuthGuard {
  const limits = { perIp, perUser: admitted } as unknown as ApiRateLimits;
  const strategy = { rememberedUser } as unknown as JwtStrategy;
  const sessions = new ConsoleSessions({ jwtSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' } as Settings);
  return new JwtAuthGuard(new Reflector(), limits, new AuthenticatedPrefetch(), strategy, sessions);
}

const authUser = {
  user: { id: '6f1c1c7e-3a0e-4d44-9a39-2f7f0c8a8c11' },
  isAdmin: false,
  token: { jti: '0b8f6f51-8a64-4a2c-9d1e-3c1f5b0d2e77', expiresAt: new Date(Date.now() + 60_000) },
} as unknown as AuthUser;

describe('JwtAuthGuard with a token the strategy remembers', () => {
  // No passport strategy is registered in these tests: passport's path would fail with "Unknown
  // authentication strategy", so a pass proves the remembered path does not go through it.
  it('admits with the strategy’s user as req.user, and names the user in the request’s log fields', async () => {
    const rememberedUser = jest.fn<JwtStrategy['rememberedUser']>(() => Promise.resolve(authUser));
    const req = { headers: { authorization: 'Bearer t' }, ip: '10.0.0.1' } as Record<string, unknown>;
    await expect(guardWith(rememberedUser).canActivate(contextFor(req))).resolves.toBe(true);
    expect(rememberedUser.mock.calls[0]?.[0]).toBe(req);
    expect(req.user).toBe(authUser);
    expect(requestLogFields(req as never).userId).toBe(authUser.user.id);
  });

  it('answers the strategy’s own refusal (a revoked token), not a generic one, and sets no user', async () => {
    const revoked = new AppError('TOKEN_REVOKED', 'This token was revoked; log in again');
    const req = { headers: { authorization: 'Bearer t' }, ip: '10.0.0.1' } as Record<string, unknown>;
    const guard = guardWith(() => Promise.reject(revoked));
    await expect(guard.canActivate(contextFor(req))).rejects.toBe(revoked);
    expect(req.user).toBeUndefined();
  });

  it('the address limit still answers first when both it and the token fail', async () => {
    const refused = { consume: () => Promise.reject(new RateLimiterRes(0, 5000, 101)) };
    const req = { headers: { authorization: 'Bearer t' }, ip: '10.0.0.1' } as Record<string, unknown>;
    const guard = guardWith(() => Promise.reject(new AppError('TOKEN_REVOKED', 'revoked')), refused);
    await expect(guard.canActivate(contextFor(req))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('a token the strategy does not remember goes through passport', async () => {
    const req = { headers: { authorization: 'Bearer t' }, ip: '10.0.0.1' } as Record<string, unknown>;
    const guard = guardWith(() => undefined);
    await expect(guard.canActivate(contextFor(req))).rejects.toThrow(/Unknown authentication strategy/);
  });
});
