import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import type { JwtService } from '@nestjs/jwt';
import { Reflector } from '@nestjs/core';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../common/app-error.js';
import type { ApiRateLimits } from '../common/rate-limit.js';
import { requestLogFields } from '../common/correlation.js';
import type { Settings } from '../config/settings.js';
import type { AuthUser } from './auth-user.js';
import { ConsoleSessions } from './console-session.js';
import { AuthenticationBeforeBody, JwtAuthGuard } from './guards.js';
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

describe('AuthenticationBeforeBody (the codec routes, before their large body is read)', () => {
  const before = (perIp: { consume: (key: string) => Promise<unknown> }, remembered: JwtStrategy['rememberedUser']) =>
    new AuthenticationBeforeBody(
      { perIp, perUser: admitted } as unknown as ApiRateLimits,
      { rememberedUser: remembered } as unknown as JwtStrategy,
      { verifyAsync: () => Promise.reject(new Error('not called in these tests')) } as unknown as JwtService,
    );

  it('counts the address first: RATE_LIMITED even without a token, keyed by the /64 of an IPv6 client', async () => {
    const keys: string[] = [];
    const refused = {
      consume: (key: string) => {
        keys.push(key);
        return Promise.reject(new RateLimiterRes(0, 5000, 101));
      },
    };
    const req = { headers: {}, ip: '2001:db8:7:8::42' } as never;
    await expect(before(refused, () => undefined).admin(req, { cookie: 'c' })).rejects.toMatchObject({
      code: 'RATE_LIMITED',
    });
    expect(keys).toEqual(['2001:db8:7:8::/64']);
  });

  it('refuses a missing token and a non-admin; takes an admin, after which JwtAuthGuard admits as is', async () => {
    const none = { headers: {}, ip: '10.0.0.1' } as Record<string, unknown>;
    await expect(before(admitted, () => undefined).admin(none as never, {})).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    const user = { headers: { authorization: 'Bearer t' }, ip: '10.0.0.1' } as Record<string, unknown>;
    await expect(before(admitted, () => Promise.resolve(authUser)).admin(user as never, {})).rejects.toMatchObject({
      code: 'ADMIN_REQUIRED',
    });
    expect(user.user).toBeUndefined();
    const admin = { ...authUser, isAdmin: true };
    const viaCookie = { headers: { cookie: 'other=1; c=t' }, ip: '10.0.0.1' } as Record<string, unknown>;
    const remembered = jest.fn<JwtStrategy['rememberedUser']>(() => Promise.resolve(admin));
    await before(admitted, remembered).admin(viaCookie as never, { cookie: 'c' });
    expect(viaCookie.user).toBe(admin);
    // The guard neither counts nor authenticates again (a strategy that refuses everything is not asked).
    const counted = jest.fn(() => Promise.resolve(new RateLimiterRes(99, 1000)));
    const guard = guardWith(() => Promise.reject(new Error('asked again')), { consume: counted });
    await expect(guard.canActivate(contextFor(viaCookie))).resolves.toBe(true);
    expect(counted).not.toHaveBeenCalled();
  });
});
