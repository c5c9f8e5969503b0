/**
 * The pieces of the service the conformance command drives, behind the few calls the scenarios make:
 * the service's MCP client (McpClient, over guardedFetch), its discovery (discoverAuthorization), built
 * on a SiteHttpClient with the command's own settings: private addresses and plain http to loopback
 * hosts allowed (the suite's servers are http://localhost), which no setting of the service allows.
 */
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Settings } from '../../src/config/settings.js';
import type { McpOAuthClientEntity } from '../../src/oauth/mcp-oauth-client.entity.js';
import { type McpClientIdentity, McpOAuthClients } from '../../src/oauth/mcp-oauth-clients.js';
import type { McpOAuthClientsRepository } from '../../src/oauth/mcp-oauth-clients.repository.js';
import { McpOAuthFlow } from '../../src/oauth/mcp-oauth-flow.js';
import { OAuthConfigs } from '../../src/oauth/oauth-config.js';
import { McpClient } from '../../src/sites/mcp-client.js';
import { discoverAuthorization, type McpChallenge } from '../../src/sites/mcp-discovery.js';
import type { McpAuthorization } from '../../src/sites/mcp-state.js';
import type { SiteScope } from '../../src/sites/scopes.js';
import { SiteHttpClient } from '../../src/sites/site-http.js';
import type { CredentialEntity } from '../../src/vault/credential.entity.js';
import type { SiteEntity } from '../../src/vault/site.entity.js';
import { VaultCipher } from '../../src/vault/vault-cipher.js';

/** A 401 or 403 of the MCP server, as its WWW-Authenticate said it. */
export type McpChallengeLike = McpChallenge;

export interface ListedTool {
  name: string;
  inputSchema?: Record<string, unknown>;
}

export type Probe = { kind: 'tools'; tools: ListedTool[] } | { kind: 'unauthorized'; challenge: McpChallengeLike };
export type Call =
  { kind: 'result'; isError: boolean; text: string } | { kind: 'unauthorized'; challenge: McpChallengeLike };

export interface ConformanceService {
  probe(endpoint: string, token: string | null): Promise<Probe>;
  call(endpoint: string, token: string | null, tool: string, input: Record<string, unknown>): Promise<Call>;
  discover(endpoint: string, challenge: McpChallengeLike): Promise<McpAuthorization | null>;
  /**
   * The service's OAuth start and completion for the MCP server: its client (configured, metadata
   * document or registration), the scopes it asks (the challenge's or scopes_supported, plus on a
   * step-up the scope a 403 named, `requiredScope`), PKCE S256, `resource`, the code's exchange.
   */
  authorize(authorization: McpAuthorization, requiredScope: string | null): Promise<string>;
  close(): Promise<void>;
}

/** The command's public base URL: https, so the service may use its Client ID Metadata Document. */
export const PUBLIC_BASE_URL = 'https://agentsite.conformance.invalid';

/** The Client ID Metadata Document URL the suite expects (as MCP_CLIENT_METADATA_URL would set it). */
export const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** DCR registrations of the run, in memory (the command has no database): as the table, one per issuer. */
class RegistrationsInMemory implements Pick<McpOAuthClientsRepository, 'find' | 'insertOrGet' | 'remove'> {
  private readonly rows: McpOAuthClientEntity[] = [];

  async find(issuer: string, redirectUri: string): Promise<McpOAuthClientEntity | null> {
    return this.rows.find((r) => r.issuer === issuer && r.redirectUri === redirectUri) ?? null;
  }

  async insertOrGet(row: Omit<McpOAuthClientEntity, 'createdAt'>): Promise<McpOAuthClientEntity> {
    const stored = (await this.find(row.issuer, row.redirectUri)) ?? { ...row, createdAt: new Date() };
    if (!this.rows.includes(stored)) {
      this.rows.push(stored);
    }
    return stored;
  }

  async remove(id: string): Promise<void> {
    const at = this.rows.findIndex((r) => r.id === id);
    if (at >= 0) {
      this.rows.splice(at, 1);
    }
  }
}

/**
 * The service's openid-client configurations, with plain http allowed to a loopback authorization
 * server (the suite's): the command's own exception, as SiteHttpSettings.allowLoopbackHttp.
 */
class LoopbackOAuthConfigs extends OAuthConfigs {
  override forMcp(auth: McpAuthorization, identity: McpClientIdentity): oidc.Configuration {
    const config = super.forMcp(auth, identity);
    if (new URL(auth.tokenEndpoint).protocol === 'http:') {
      oidc.allowInsecureRequests(config); // only reachable for loopback hosts: the fetch refuses the rest
    }
    return config;
  }
}

/**
 * The command's settings: an https public base URL, the suite's metadata document URL, an in-memory
 * vault key (registrations' secrets sealed as the service seals them), and the pre-registered client
 * of MCP_CONFORMANCE_CONTEXT as MCP_OAUTH_CLIENTS would name it, once the issuer is known.
 */
function commandSettings(): Settings {
  return {
    publicBaseUrl: PUBLIC_BASE_URL,
    oauthClientId: 'agentsite',
    mcpOAuthClients: {},
    // The suite's auth/basic-cimd accepts only its example document URL as client_id.
    mcpClientMetadataUrl: CLIENT_METADATA_URL,
    vaultKeys: [{ id: 'conformance', key: randomBytes(32) }],
    siteCaCerts: undefined,
    siteAllowPrivateHosts: [],
  } as unknown as Settings;
}

/** Builds the service's pieces with the command's own settings (loopback http allowed). */
export async function conformanceService(context: Record<string, unknown>): Promise<ConformanceService> {
  const settings = commandSettings();
  const http = new SiteHttpClient({ ...settings, allowPrivateAddresses: true, allowLoopbackHttp: true });
  const mcp = new McpClient(http);
  const registrations = new RegistrationsInMemory() as unknown as McpOAuthClientsRepository;
  const clients = new McpOAuthClients(registrations, new VaultCipher(settings), http, settings);
  const configs = new LoopbackOAuthConfigs(http, settings, clients);
  const flow = new McpOAuthFlow(configs, clients);
  let granted: SiteScope[] | null = null;
  return {
    async probe(endpoint, token) {
      const probe = await mcp.probe(endpoint, token);
      return probe.kind === 'listed' ? { kind: 'tools', tools: probe.tools as ListedTool[] } : probe;
    },
    async call(endpoint, token, tool, input) {
      const site = { id: 'conformance', url: endpoint, mcp: null };
      const answer = await mcp.callTool({ site, token, tool, input });
      switch (answer.kind) {
        case 'result':
          return { kind: 'result', isError: answer.isError, text: JSON.stringify(answer.result.content) };
        case 'unauthorized':
        case 'forbidden':
          return { kind: 'unauthorized', challenge: answer.challenge };
        case 'rate_limited':
          throw new Error(`the server answered 429 (Retry-After ${answer.retryAfterSeconds ?? 'none'})`);
        case 'rpc_error':
          throw new Error(`the server answered a JSON-RPC error ${answer.code}: ${answer.message}`);
        case 'http_error':
          throw new Error(answer.message);
      }
    },
    discover(endpoint, challenge) {
      return discoverAuthorization(mcp.fetch, endpoint, challenge);
    },
    async authorize(authorization, requiredScope) {
      if (typeof context.client_id === 'string') {
        // auth/pre-registration: the client an operator registered, named for the issuer.
        (settings.mcpOAuthClients as Record<string, unknown>)[authorization.issuer.replace(/\/+$/, '')] = {
          clientId: context.client_id,
          ...(typeof context.client_secret === 'string' ? { clientSecret: context.client_secret } : {}),
          tokenEndpointAuthMethod: typeof context.client_secret === 'string' ? 'client_secret_basic' : 'none',
        };
      }
      const site = {
        id: 'conformance',
        protocol: 'mcp',
        url: authorization.resource,
        manifest: { name: 'the conformance server' },
        mcp: { endpoint: authorization.resource, protocolVersion: null, authorization, toolsFreshUntil: null },
      } as unknown as SiteEntity;
      const credential =
        requiredScope === null ? null : ({ scopes: granted, requiredScope } as unknown as CredentialEntity);
      // OAuthService.start, without its table: a single-use state and a PKCE verifier.
      // The server's tools are not known before the first connection: all of scopes_supported.
      const start = await flow.prepare(site, credential, []);
      const state = oidc.randomState();
      const verifier = oidc.randomPKCECodeVerifier();
      const authorizationUrl = flow.authorizationUrl(start, state, await oidc.calculatePKCECodeChallenge(verifier));
      // The user's browser at the authorization server, which approves at once: its redirect carries the code.
      const consent = await fetch(authorizationUrl, { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location') ?? '', authorizationUrl);
      // OAuthService.complete: the callback URL with what the browser brought, then the exchange.
      const currentUrl = new URL(configs.redirectUri);
      for (const name of ['code', 'state', 'iss', 'error']) {
        const value = callback.searchParams.get(name);
        if (value !== null) {
          currentUrl.searchParams.set(name, value);
        }
      }
      const iss = callback.searchParams.get('iss') ?? undefined;
      const tokens = await flow.exchange(site, currentUrl, verifier, state, iss);
      granted = (
        typeof tokens.scope === 'string' ? tokens.scope.split(' ').filter(Boolean) : start.scopes
      ) as SiteScope[];
      return tokens.access_token;
    },
    async close() {
      await mcp.onModuleDestroy();
      http.onModuleDestroy();
    },
  };
}
