import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { SiteNetworkError } from '../sites/site-http.js';
import { OAUTH_STATE_TTL_MS } from './oauth.service.js';
import { oauthFixture, SITE_ID, siteFixture, TOKEN_URL } from './testing/oauth-fixture.js';
import { refusal } from '../common/testing/refusals.js';

const USER = 'user-1';

/** Starts a connection and returns the fixture, the state and the PKCE challenge the authorization URL carries. */
async function started(tools: string[] = ['search_orders']) {
  const fixture = oauthFixture();
  const site = siteFixture();
  fixture.rows.sites.set(site.id, site);
  const { authorizationUrl, scopes } = await fixture.oauth.start(USER, site, tools);
  const url = new URL(authorizationUrl);
  return {
    ...fixture,
    site,
    scopes,
    url,
    state: url.searchParams.get('state')!,
    challenge: url.searchParams.get('code_challenge')!,
  };
}

const TOKENS = {
  status: 200,
  body: { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-1' },
};

describe('OAuthService.start', () => {
  it('asks for the least scopes the chosen tools need, with a state and an S256 PKCE challenge', async () => {
    const { url, scopes, state, challenge } = await started(['search_orders']);
    expect(scopes).toEqual(['read']);
    expect(url.origin + url.pathname).toBe('https://shop.example.com/oauth/authorize');
    expect(url.searchParams.get('scope')).toBe('read');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe('https://agentsite.test/api/oauth/callback');
    expect(state.length).toBeGreaterThanOrEqual(32);
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('keeps only the hash of the state and the verifier sealed, expiring in ten minutes', async () => {
    const { rows, state } = await started(['search_orders']);
    const [stored] = [...rows.states.values()];
    expect(stored!.stateHash).toBe(createHash('sha256').update(state).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(state);
    expect(stored!.ciphertext.length).toBeGreaterThan(0);
    const ttl = stored!.expiresAt.getTime() - Date.now();
    expect(ttl).toBeGreaterThan(OAUTH_STATE_TTL_MS - 5000);
    expect(ttl).toBeLessThanOrEqual(OAUTH_STATE_TTL_MS);
  });

  it('refuses a bearer site, an unknown tool and a scope the site does not offer (VALIDATION_ERROR)', async () => {
    const { oauth } = oauthFixture();
    const bearer = siteFixture({ manifest: { ...siteFixture().manifest, auth: { type: 'bearer' } } });
    expect((await refusal(oauth.start(USER, bearer, undefined))).details?.[0]?.field).toBe('site');
    const unknown = await refusal(oauth.start(USER, siteFixture(), ['no_such_tool']));
    expect([unknown.code, unknown.details?.[0]?.message]).toEqual([
      'VALIDATION_ERROR',
      'the site has no tool "no_such_tool"',
    ]);
    const notOffered = await refusal(oauth.start(USER, siteFixture(), ['delete_order']));
    expect(notOffered.details?.[0]?.message).toContain('delete');
  });
});

describe('OAuthService.complete (callback)', () => {
  it('exchanges the code with the verifier of the challenge and stores the granted pair', async () => {
    const { oauth, http, store, state, challenge } = await started(['search_orders', 'create_order']);
    http.answers.push({ ...TOKENS, body: { ...TOKENS.body, scope: 'read' } });
    await expect(oauth.complete(USER, { code: 'code-1', state })).resolves.toEqual({
      siteId: SITE_ID,
      scopes: ['read'],
      connected: true,
    });
    const [exchange] = http.requests;
    expect(exchange!.url).toBe(TOKEN_URL);
    expect(exchange!.form.get('grant_type')).toBe('authorization_code');
    expect(exchange!.form.get('code')).toBe('code-1');
    const verifier = exchange!.form.get('code_verifier')!;
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(challenge);
    expect(store.secretOf(SITE_ID)).toEqual({ kind: 'oauth2', accessToken: 'at-1', refreshToken: 'rt-1' });
    expect(store.rows.get(SITE_ID)?.scopes).toEqual(['read']);
  });

  it('keeps the scopes asked for when the token answer names none', async () => {
    const { oauth, http, store, state } = await started(['search_orders', 'create_order']);
    http.answers.push(TOKENS);
    await oauth.complete(USER, { code: 'c', state });
    expect(store.rows.get(SITE_ID)?.scopes).toEqual(['read', 'write']);
  });

  it('uses a state once: a second callback with it is refused (VALIDATION_ERROR on state)', async () => {
    const { oauth, http, state } = await started();
    http.answers.push(TOKENS);
    await oauth.complete(USER, { code: 'c', state });
    const again = await refusal(oauth.complete(USER, { code: 'c', state }));
    expect([again.code, again.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 'state']);
    expect(http.requests).toHaveLength(1);
  });

  it('refuses an unknown or expired state', async () => {
    const { oauth, rows, state } = await started();
    expect((await refusal(oauth.complete(USER, { code: 'c', state: 'forged' }))).details?.[0]?.field).toBe('state');
    const start = Date.now();
    rows.now = () => start + OAUTH_STATE_TTL_MS + 1;
    expect((await refusal(oauth.complete(USER, { code: 'c', state }))).details?.[0]?.field).toBe('state');
  });

  it('lets only the user who started it complete it (PERMISSION_DENIED), and the state is spent by the attempt', async () => {
    const { oauth, http, state } = await started();
    expect((await refusal(oauth.complete('user-2', { code: 'c', state }))).code).toBe('PERMISSION_DENIED');
    expect((await refusal(oauth.complete(USER, { code: 'c', state }))).code).toBe('VALIDATION_ERROR');
    expect(http.requests).toHaveLength(0);
  });

  it("refuses the site's error answer and a foreign issuer before any token request", async () => {
    const first = await started();
    const denied = await refusal(first.oauth.complete(USER, { state: first.state, error: 'access_denied' }));
    expect([denied.code, denied.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 'error']);
    const second = await started();
    const mixUp = await refusal(
      second.oauth.complete(USER, { code: 'c', state: second.state, iss: 'https://evil.example.com' }),
    );
    expect(mixUp.details?.[0]?.field).toBe('iss');
    expect([...first.http.requests, ...second.http.requests]).toEqual([]);
  });

  it('refuses when the site left the vault, or the workspace member is no longer an admin', async () => {
    const gone = await started();
    gone.rows.sites.delete(SITE_ID);
    expect(
      (await refusal(gone.oauth.complete(USER, { code: 'c', state: gone.state }))).details?.[0]?.message,
    ).toContain('no longer in your vault');
    const shared = await started();
    shared.rows.sites.set(SITE_ID, siteFixture({ workspaceId: 'ws-1', userId: 'someone' }));
    shared.rows.memberships.push({ workspaceId: 'ws-1', userId: USER, role: 'member', createdAt: new Date() });
    expect((await refusal(shared.oauth.complete(USER, { code: 'c', state: shared.state }))).code).toBe(
      'VALIDATION_ERROR',
    );
    const admin = await started();
    admin.rows.sites.set(SITE_ID, siteFixture({ workspaceId: 'ws-1', userId: 'someone' }));
    admin.rows.memberships.push({ workspaceId: 'ws-1', userId: USER, role: 'admin', createdAt: new Date() });
    admin.http.answers.push(TOKENS);
    await expect(admin.oauth.complete(USER, { code: 'c', state: admin.state })).resolves.toMatchObject({
      connected: true,
    });
  });

  it("answers TOOL_EXECUTION_ERROR when the site refuses the code, naming the site's reason", async () => {
    const { oauth, http, state } = await started();
    http.answers.push({ status: 400, body: { error: 'invalid_grant', error_description: 'code expired' } });
    const err = await refusal(oauth.complete(USER, { code: 'c', state }));
    expect([err.code, err.message]).toEqual(['TOOL_EXECUTION_ERROR', 'Shop refused the code exchange: code expired']);
  });

  it('keeps network details (addresses, ports) out of the answer when the exchange fails', async () => {
    const { oauth, http, state } = await started();
    http.answers.push(new SiteNetworkError('connect ECONNREFUSED 10.1.2.3:443', 'network'));
    const err = await refusal(oauth.complete(USER, { code: 'c', state }));
    expect(err.code).toBe('TOOL_EXECUTION_ERROR');
    expect(err.message).not.toContain('10.1.2.3');
  });
});
