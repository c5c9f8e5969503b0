import { randomBytes } from 'node:crypto';
import { standIn } from '../../common/testing/stand-in.js';
import type { Settings } from '../../config/settings.js';
import type { Manifest } from '../../sites/manifest.js';
import type { SiteHttpClient } from '../../sites/site-http.js';
import type { CredentialsService } from '../../vault/credentials.service.js';
import type { SiteEntity } from '../../vault/site.entity.js';
import { VaultCipher } from '../../vault/vault-cipher.js';
import { McpOAuthFlow } from '../mcp-oauth-flow.js';
import { McpOAuthClients } from '../mcp-oauth-clients.js';
import type { McpOAuthClientsRepository } from '../mcp-oauth-clients.repository.js';
import { OAuthConfigs } from '../oauth-config.js';
import type { OAuthRepository } from '../oauth.repository.js';
import { OAuthService } from '../oauth.service.js';
import type { CredentialLeasesService } from '../../vault/credential-leases.service.js';
import { TokenRefreshService } from '../token-refresh.service.js';
import { FakeCredentialsService, FakeCredentialStore, FakeCredentialLeases } from './fake-credentials.js';
import { FakeMcpOAuthClientsRepository } from './fake-mcp-oauth-clients.repository.js';
import { FakeOAuthRepository } from './fake-oauth.repository.js';
import { FakeSiteHttp } from './fake-site-http.js';

export const SITE_ID = 'c0000000-0000-4000-8000-000000000001';
export const TOKEN_URL = 'https://shop.example.com/oauth/token';

export function oauthManifest(): Manifest {
  return {
    name: 'Shop',
    version: '1.0.0',
    description: 'A shop',
    server: { url: 'https://shop.example.com/api' },
    auth: {
      type: 'oauth2',
      authorization_url: 'https://shop.example.com/oauth/authorize',
      token_url: TOKEN_URL,
      scopes: ['read', 'write'],
    },
    tools: [
      { name: 'search_orders', description: 'Search', input_schema: { type: 'object', properties: {} } },
      { name: 'create_order', description: 'Create', input_schema: { type: 'object', properties: {} } },
      { name: 'delete_order', description: 'Delete', input_schema: { type: 'object', properties: {} } },
    ],
  };
}

export function siteFixture(fields: Partial<SiteEntity> = {}): SiteEntity {
  return {
    id: SITE_ID,
    userId: 'user-1',
    workspaceId: null,
    url: 'https://shop.example.com',
    protocol: 'agentsite',
    manifest: oauthManifest(),
    mcp: null,
    manifestFetchedAt: new Date(),
    createdAt: new Date(),
    updatedAt: new Date(),
    ...fields,
  };
}

/** The OAuth flow and the token refresh over fakes: states, credentials and the site's token endpoint in memory. */
export function oauthFixture(overrides: Partial<Settings> = {}) {
  const settings = standIn<Settings>({
    publicBaseUrl: 'https://agentsite.test',
    oauthClientId: 'agentsite-client',
    mcpOAuthClients: {},
    mcpClientMetadataUrl: `${overrides.publicBaseUrl ?? 'https://agentsite.test'}/api/oauth/client-metadata`,
    vaultKeys: [{ id: 'k1', key: randomBytes(32) }],
    ...overrides,
  });
  const cipher = new VaultCipher(settings);
  const http = new FakeSiteHttp();
  const mcpRows = new FakeMcpOAuthClientsRepository();
  const mcpClients = new McpOAuthClients(
    standIn<McpOAuthClientsRepository>(mcpRows),
    cipher,
    standIn<SiteHttpClient>(http),
    settings,
  );
  const configs = new OAuthConfigs(standIn<SiteHttpClient>(http), settings, mcpClients);
  const rows = new FakeOAuthRepository();
  const store = new FakeCredentialStore(cipher);
  const credentials = standIn<CredentialsService>(new FakeCredentialsService(store));
  const refreshes = new FakeCredentialLeases(store);
  const mcpFlow = new McpOAuthFlow(configs, mcpClients);
  const oauth = new OAuthService(standIn<OAuthRepository>(rows), configs, cipher, credentials, mcpFlow);
  const tokens = new TokenRefreshService(standIn<CredentialLeasesService>(refreshes), credentials, cipher, configs);
  return { rows, http, store, refreshes, oauth, tokens, mcpRows, mcpClients, settings };
}
