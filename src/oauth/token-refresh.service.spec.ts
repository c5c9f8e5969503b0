import { describe, expect, it } from '@jest/globals';
import { ToolCallFailure } from '../sites/tool-failure.js';
import { REFRESH_SKEW_MS } from './token-refresh.service.js';
import { oauthFixture, SITE_ID, siteFixture } from './testing/oauth-fixture.js';

const site = siteFixture();

/** A stored OAuth pair expiring in `ms` (negative: expired). */
function withPair(expiresInMs: number, refreshToken: string | null = 'rt-1') {
  const fixture = oauthFixture();
  const row = fixture.store.put(
    SITE_ID,
    { kind: 'oauth2', accessToken: 'at-1', refreshToken },
    { expiresAt: new Date(Date.now() + expiresInMs) },
  );
  return { ...fixture, row };
}

async function failureOf(promise: Promise<unknown>): Promise<ToolCallFailure> {
  const err = await promise.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  if (!(err instanceof ToolCallFailure)) {
    throw new Error(`expected a ToolCallFailure, got ${String(err)}`);
  }
  return err;
}

const REFRESHED = {
  status: 200,
  body: { access_token: 'at-2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-2' },
};

describe('TokenRefreshService.tokenFor (when to refresh)', () => {
  it('hands out a bearer token as it is', async () => {
    const { store, tokens, http } = oauthFixture();
    store.put(SITE_ID, { kind: 'bearer', token: 'tok' });
    await expect(tokens.tokenFor(site)).resolves.toEqual({ token: 'tok', generation: 1, kind: 'bearer' });
    expect(http.requests).toEqual([]);
  });

  it('uses an access token that is not near its expiry without asking the site', async () => {
    const { tokens, http } = withPair(REFRESH_SKEW_MS + 60_000);
    await expect(tokens.tokenFor(site)).resolves.toEqual({ token: 'at-1', generation: 1, kind: 'oauth2' });
    expect(http.requests).toEqual([]);
  });

  it('refreshes within a minute of expiry and rotates the refresh token', async () => {
    const { tokens, http, store } = withPair(REFRESH_SKEW_MS - 1000);
    http.answers.push(REFRESHED);
    await expect(tokens.tokenFor(site)).resolves.toEqual({ token: 'at-2', generation: 2, kind: 'oauth2' });
    expect(http.requests[0]!.form.get('grant_type')).toBe('refresh_token');
    expect(http.requests[0]!.form.get('refresh_token')).toBe('rt-1');
    expect(store.secretOf(SITE_ID)).toEqual({ kind: 'oauth2', accessToken: 'at-2', refreshToken: 'rt-2' });
    expect(store.rows.get(SITE_ID)).toMatchObject({ generation: 2, refreshLeaseOwner: null, status: 'active' });
  });

  it('keeps the refresh token when the site does not rotate it', async () => {
    const { tokens, http, store } = withPair(-1000);
    http.answers.push({ status: 200, body: { access_token: 'at-2', token_type: 'Bearer' } });
    await tokens.tokenFor(site);
    expect(store.secretOf(SITE_ID)).toMatchObject({ accessToken: 'at-2', refreshToken: 'rt-1' });
  });

  it('refreshes after a 401 on the generation it used, but not when that generation was replaced already', async () => {
    const { tokens, http } = withPair(3600_000);
    await expect(tokens.tokenFor(site, 0)).resolves.toMatchObject({ token: 'at-1' });
    expect(http.requests).toHaveLength(0);
    http.answers.push(REFRESHED);
    await expect(tokens.tokenFor(site, 1)).resolves.toMatchObject({ token: 'at-2', generation: 2 });
  });
});

describe('TokenRefreshService.refresh (single flight, refusals)', () => {
  it('waits for the refresh another caller holds and uses its pair, spending no refresh token itself', async () => {
    const { tokens, http, store, row } = withPair(-1000);
    Object.assign(store.rows.get(SITE_ID)!, {
      refreshLeaseOwner: 'other',
      refreshLeaseUntil: new Date(Date.now() + 60_000),
    });
    setTimeout(() => {
      store.put(
        SITE_ID,
        { kind: 'oauth2', accessToken: 'at-theirs', refreshToken: 'rt-theirs' },
        { expiresAt: new Date(Date.now() + 3600_000) },
      );
    }, 200);
    await expect(tokens.refresh(site, row.generation)).resolves.toEqual({
      token: 'at-theirs',
      generation: 2,
      kind: 'oauth2',
    });
    expect(http.requests).toEqual([]);
  });

  it('marks the credential reauth_required when the site refuses the refresh token (invalid_grant)', async () => {
    const { tokens, http, store } = withPair(-1000);
    http.answers.push({ status: 400, body: { error: 'invalid_grant' } });
    const failure = await failureOf(tokens.tokenFor(site));
    expect(failure.kind).toBe('reauth_required');
    expect(store.rows.get(SITE_ID)?.status).toBe('reauth_required');
    expect((await failureOf(tokens.tokenFor(site))).kind).toBe('reauth_required');
  });

  it('keeps a newer pair stored meanwhile when its own refresh was refused after its lease was taken over', async () => {
    const { tokens, http, store, refreshes } = withPair(-1000);
    // The site refuses our (already spent) token; meanwhile another caller stored generation 2.
    http.answers.push({ status: 400, body: { error: 'invalid_grant' } });
    const claim = refreshes.claimLease.bind(refreshes);
    refreshes.claimLease = async (row, owner, leaseMs) => {
      const ok = await claim(row, owner, leaseMs);
      store.put(
        SITE_ID,
        { kind: 'oauth2', accessToken: 'at-newer', refreshToken: 'rt-newer' },
        { expiresAt: new Date(Date.now() + 3600_000) },
      );
      return ok;
    };
    await expect(tokens.tokenFor(site)).resolves.toMatchObject({ token: 'at-newer', generation: 2 });
    expect(store.rows.get(SITE_ID)?.status).toBe('active');
  });

  it('without a refresh token: the access token serves to its expiry, then reconnect, asking nobody', async () => {
    // Within the refresh skew, but still valid: used as it is (there is nothing to refresh it with).
    const valid = withPair(REFRESH_SKEW_MS - 10_000, null);
    await expect(valid.tokens.tokenFor(site)).resolves.toEqual({ token: 'at-1', generation: 1, kind: 'oauth2' });
    expect(valid.http.requests).toEqual([]);

    const expired = withPair(-1000, null);
    const failure = await failureOf(expired.tokens.tokenFor(site));
    expect(failure).toMatchObject({ kind: 'reauth_required', retryable: false, code: 'TOOL_EXECUTION_ERROR' });
    expect(failure.message).toMatch(
      /^Shop needs reconnecting: its access expired at \d{4}-\d\d-\d\d \d\d:\d\d UTC and it gave no refresh token$/,
    );
    expect(expired.http.requests).toEqual([]);
    expect(expired.store.rows.get(SITE_ID)?.refreshLeaseOwner).toBeNull();
  });

  it('answers unauthorized without a request when the site refused a token that cannot be refreshed, and frees the lease', async () => {
    const { tokens, http, store } = withPair(REFRESH_SKEW_MS + 60_000, null);
    expect((await failureOf(tokens.tokenFor(site, 1))).kind).toBe('unauthorized');
    expect(http.requests).toEqual([]);
    expect(store.rows.get(SITE_ID)?.refreshLeaseOwner).toBeNull();
  });

  it('retries a refresh the site failed with a 5xx, not one it refused (4xx: unauthorized); the lease is freed', async () => {
    const down = withPair(-1000);
    down.http.answers.push({ status: 503, body: { error: 'temporarily_unavailable' } });
    // openid-client reads an OAuth error body only from a 4xx answer: a 5xx is an unusable answer (network).
    const unavailable = await failureOf(down.tokens.tokenFor(site));
    expect([unavailable.kind, unavailable.retryable]).toEqual(['network', true]);
    expect(down.store.rows.get(SITE_ID)?.refreshLeaseOwner).toBeNull();
    expect(down.store.rows.get(SITE_ID)?.status).toBe('active');
    const refused = withPair(-1000);
    refused.http.answers.push({ status: 400, body: { error: 'invalid_client' } });
    const failure = await failureOf(refused.tokens.tokenFor(site));
    expect([failure.kind, failure.retryable]).toEqual(['unauthorized', false]);
    expect(refused.store.rows.get(SITE_ID)?.refreshLeaseOwner).toBeNull();
  });

  it('answers no_credential for a site without one', async () => {
    const { tokens } = oauthFixture();
    expect((await failureOf(tokens.refresh(site, 1))).kind).toBe('no_credential');
  });
});
