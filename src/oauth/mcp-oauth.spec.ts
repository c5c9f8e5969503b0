import { describe, expect, it } from '@jest/globals';
import { refusal } from '../common/testing/refusals.js';
import type { Settings } from '../config/settings.js';
import type { McpAuthorization } from '../sites/mcp-state.js';
import { oauthFixture, SITE_ID, siteFixture } from './testing/oauth-fixture.js';

const ISSUER = 'https://auth.mcp.example.com';
const RESOURCE = 'https://mcp.example.com/mcp';

function authorization(fields: Partial<McpAuthorization> = {}): McpAuthorization {
  return {
    resource: RESOURCE,
    resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    issuer: ISSUER,
    authorizationEndpoint: `${ISSUER}/authorize`,
    tokenEndpoint: `${ISSUER}/token`,
    revocationEndpoint: `${ISSUER}/revoke`,
    registrationEndpoint: `${ISSUER}/register`,
    clientIdMetadataDocumentSupported: false,
    issParameterSupported: false,
    codeChallengeMethods: ['S256'],
    tokenEndpointAuthMethods: ['none', 'client_secret_post'],
    scopesSupported: ['files:read', 'files:write'],
    challengeScope: 'files:read',
    ...fields,
  };
}

function mcpSite(auth: McpAuthorization = authorization()) {
  return siteFixture({
    url: RESOURCE,
    protocol: 'mcp',
    mcp: { endpoint: RESOURCE, protocolVersion: '2026-07-28', authorization: auth, toolsFreshUntil: null },
  });
}

const REGISTERED = {
  status: 201,
  body: { client_id: 'dyn-1', redirect_uris: ['https://agentsite.test/api/oauth/callback'] },
};

function fixture(settings: Partial<Settings> = {}) {
  const f = oauthFixture(settings);
  return f;
}

describe('McpOAuthClients: the client the service uses at an MCP authorization server', () => {
  it('uses the MCP_OAUTH_CLIENTS entry of the issuer, registering nothing', async () => {
    const { mcpClients, http, mcpRows } = fixture({
      mcpOAuthClients: {
        [ISSUER]: { clientId: 'pre', clientSecret: 's3', tokenEndpointAuthMethod: 'client_secret_basic' },
      },
    });
    const identity = await mcpClients.identityFor(authorization({ issuer: `${ISSUER}/` }), 'Files');
    expect(identity).toEqual({
      clientId: 'pre',
      clientSecret: 's3',
      tokenEndpointAuthMethod: 'client_secret_basic',
      source: 'configured',
    });
    expect(http.requests).toEqual([]);
    expect(mcpRows.rows).toEqual([]);
  });

  it('presents its Client ID Metadata Document when the server supports it and PUBLIC_BASE_URL is https', async () => {
    const { mcpClients, http } = fixture();
    const identity = await mcpClients.identityFor(authorization({ clientIdMetadataDocumentSupported: true }), 'Files');
    expect(identity).toEqual({
      clientId: 'https://agentsite.test/api/oauth/client-metadata',
      tokenEndpointAuthMethod: 'none',
      source: 'metadata_document',
    });
    expect(mcpClients.metadataDocument()).toMatchObject({
      client_id: 'https://agentsite.test/api/oauth/client-metadata',
      redirect_uris: ['https://agentsite.test/api/oauth/callback'],
      token_endpoint_auth_method: 'none',
    });
    expect(http.requests).toEqual([]);
  });

  it('names the document by MCP_CLIENT_METADATA_URL when set: client_id and the document agree', async () => {
    const url = 'https://static.example.net/agentsite/client.json';
    const { mcpClients, http } = fixture({ mcpClientMetadataUrl: url });
    const identity = await mcpClients.identityFor(authorization({ clientIdMetadataDocumentSupported: true }), 'Files');
    expect(identity).toEqual({ clientId: url, tokenEndpointAuthMethod: 'none', source: 'metadata_document' });
    expect(mcpClients.metadataDocument()).toMatchObject({
      client_id: url,
      redirect_uris: ['https://agentsite.test/api/oauth/callback'],
    });
    expect(http.requests).toEqual([]);
  });

  it('registers dynamically when PUBLIC_BASE_URL is http even if the server supports metadata documents', async () => {
    const { mcpClients, http } = fixture({ publicBaseUrl: 'http://localhost:3000' });
    http.answers.push(REGISTERED);
    const identity = await mcpClients.identityFor(authorization({ clientIdMetadataDocumentSupported: true }), 'Files');
    expect(identity.source).toBe('registered');
    expect(http.requests.map((r) => r.url)).toEqual([`${ISSUER}/register`]);
  });

  it('registers once per issuer (application_type web, the callback, a public client) and reuses it, a secret sealed', async () => {
    const { mcpClients, http, mcpRows } = fixture();
    http.answers.push({
      ...REGISTERED,
      body: { ...REGISTERED.body, client_secret: 'dyn-secret', token_endpoint_auth_method: 'client_secret_post' },
    });
    const first = await mcpClients.identityFor(authorization(), 'Files');
    const second = await mcpClients.identityFor(authorization(), 'Files');
    expect(first).toMatchObject({
      clientId: 'dyn-1',
      clientSecret: 'dyn-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
      source: 'registered',
    });
    expect(second).toEqual(first);
    expect(http.requests).toHaveLength(1);
    const sent = JSON.parse(Buffer.from(http.bodies[0] ?? '').toString()) as Record<string, unknown>;
    expect(sent).toMatchObject({
      application_type: 'web',
      redirect_uris: ['https://agentsite.test/api/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    expect(mcpRows.rows).toHaveLength(1);
    expect(JSON.stringify(mcpRows.rows[0])).not.toContain('dyn-secret');
  });

  it('refuses a server that takes no registration when nothing else names a client', async () => {
    const { mcpClients } = fixture();
    const refused = await refusal(mcpClients.identityFor(authorization({ registrationEndpoint: null }), 'Files'));
    expect([refused.code, refused.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 'site']);
  });
});

describe('OAuthService.start for an MCP server', () => {
  it('asks for the challenge scope with S256 and the resource', async () => {
    const { oauth, http } = fixture({
      mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } },
    });
    const { authorizationUrl, scopes } = await oauth.start('user-1', mcpSite(), undefined);
    const url = new URL(authorizationUrl);
    expect(scopes).toEqual(['files:read']);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'pre',
      scope: 'files:read',
      resource: RESOURCE,
      code_challenge_method: 'S256',
    });
    expect(http.requests).toEqual([]);
  });

  it('without a challenge scope, asks for scopes_supported', async () => {
    const { oauth } = fixture({ mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } } });
    const { scopes } = await oauth.start('user-1', mcpSite(authorization({ challengeScope: null })), undefined);
    expect(scopes).toEqual(['files:read', 'files:write']);
  });

  it('without a challenge scope, asks for the least of scopes_supported the chosen tools need', async () => {
    const { oauth } = fixture({ mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } } });
    const site = mcpSite(
      authorization({ challengeScope: null, scopesSupported: ['files:read', 'files:write', 'offline_access'] }),
    );
    const { scopes, authorizationUrl } = await oauth.start('user-1', site, ['search_orders']);
    expect(scopes).toEqual(['files:read', 'offline_access']);
    expect(new URL(authorizationUrl).searchParams.get('scope')).toBe('files:read offline_access');
    // All the tools (no `tools` given): search (read), create (write) and delete, which no scope is named after.
    expect((await oauth.start('user-1', site, undefined)).scopes).toEqual([
      'files:read',
      'files:write',
      'offline_access',
    ]);
    expect((await oauth.start('user-1', site, ['search_orders', 'create_order'])).scopes).toEqual([
      'files:read',
      'files:write',
      'offline_access',
    ]);
  });

  it("asks for all of scopes_supported while the server's tools are not known (before a first connection)", async () => {
    const { oauth } = fixture({ mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } } });
    const site = mcpSite(authorization({ challengeScope: null }));
    site.manifest = { ...site.manifest, tools: [] };
    expect((await oauth.start('user-1', site, undefined)).scopes).toEqual(['files:read', 'files:write']);
  });

  it('refuses a tool the server does not have (VALIDATION_ERROR on tools), as for an agentsite site', async () => {
    const { oauth, rows } = fixture({
      mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } },
    });
    const refused = await refusal(oauth.start('user-1', mcpSite(), ['search_orders', 'format_disk']));
    expect([refused.code, refused.details]).toEqual([
      'VALIDATION_ERROR',
      [{ field: 'tools', message: 'the site has no tool "format_disk"' }],
    ]);
    expect(rows.states.size).toBe(0);
  });

  it('after a 403 insufficient_scope, asks for the union of what was granted and the required scope', async () => {
    const { oauth, store } = fixture({
      mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } },
    });
    store.put(
      SITE_ID,
      { kind: 'oauth2', accessToken: 'at', refreshToken: 'rt' },
      {
        scopes: ['files:read', 'profile'] as never,
        requiredScope: 'files:write',
      },
    );
    const { scopes } = await oauth.start('user-1', mcpSite(), undefined);
    expect(scopes).toEqual(['files:read', 'profile', 'files:write']);
  });

  it('refuses a server without PKCE S256 (MANIFEST_INVALID), registering nothing', async () => {
    const { oauth, http } = fixture();
    const refused = await refusal(
      oauth.start('user-1', mcpSite(authorization({ codeChallengeMethods: ['plain'] })), undefined),
    );
    expect([refused.code, refused.details?.[0]?.field]).toEqual(['MANIFEST_INVALID', 'auth']);
    expect(http.requests).toEqual([]);
  });
});

describe('OAuthService.complete for an MCP server: RFC 9207 iss', () => {
  const PRE = { mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' as const } } };
  const TOKENS = { status: 200, body: { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600 } };

  async function startedFor(auth: McpAuthorization) {
    const f = fixture(PRE);
    const site = mcpSite(auth);
    f.rows.sites.set(site.id, site);
    const url = new URL((await f.oauth.start('user-1', site, undefined)).authorizationUrl);
    return { ...f, state: url.searchParams.get('state')! };
  }

  it('refuses a redirect without iss when the server advertises it (VALIDATION_ERROR on iss), the state spent', async () => {
    const { oauth, http, state } = await startedFor(authorization({ issParameterSupported: true }));
    const refused = await refusal(oauth.complete('user-1', { code: 'c', state }));
    expect([refused.code, refused.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 'iss']);
    expect(http.requests).toEqual([]);
    const again = await refusal(oauth.complete('user-1', { code: 'c', state, iss: ISSUER }));
    expect(again.details?.[0]?.field).toBe('state');
  });

  it('takes a redirect with the right iss when advertised, and one without iss when not advertised', async () => {
    const advertised = await startedFor(authorization({ issParameterSupported: true }));
    advertised.http.answers.push(TOKENS);
    await expect(
      advertised.oauth.complete('user-1', { code: 'c', state: advertised.state, iss: ISSUER }),
    ).resolves.toMatchObject({ connected: true });
    const silent = await startedFor(authorization({ issParameterSupported: false }));
    silent.http.answers.push(TOKENS);
    await expect(silent.oauth.complete('user-1', { code: 'c', state: silent.state })).resolves.toMatchObject({
      connected: true,
    });
  });

  it('reads a snapshot stored without the field as not advertised', async () => {
    const { issParameterSupported: _dropped, ...stored } = authorization({ issParameterSupported: true });
    const old = await startedFor(stored as McpAuthorization);
    old.http.answers.push(TOKENS);
    await expect(old.oauth.complete('user-1', { code: 'c', state: old.state })).resolves.toMatchObject({
      connected: true,
    });
  });
});

describe('TokenRefreshService for an MCP server', () => {
  it('refreshes with the registered client and the resource, never registering', async () => {
    const { tokens, http, store } = fixture({
      mcpOAuthClients: { [ISSUER]: { clientId: 'pre', tokenEndpointAuthMethod: 'none' } },
    });
    store.put(
      SITE_ID,
      { kind: 'oauth2', accessToken: 'at-1', refreshToken: 'rt-1' },
      { expiresAt: new Date(Date.now() - 1000) },
    );
    http.answers.push({
      status: 200,
      body: { access_token: 'at-2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-2' },
    });
    await expect(tokens.tokenFor(mcpSite())).resolves.toMatchObject({ token: 'at-2', kind: 'oauth2' });
    expect(http.requests.map((r) => r.url)).toEqual([`${ISSUER}/token`]);
    expect(Object.fromEntries(http.requests[0]!.form)).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: 'rt-1',
      client_id: 'pre',
      resource: RESOURCE,
    });
  });
});
