/**
 * The pieces of the service the conformance command drives, behind the few calls the scenarios make:
 * the service's MCP client (McpClient, over guardedFetch), its discovery (discoverAuthorization), built
 * on a SiteHttpClient with the command's own settings: private addresses and plain http to loopback
 * hosts allowed (the suite's servers are http://localhost), which no setting of the service allows.
 */
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/client';
import { McpClient } from '../../src/sites/mcp-client.js';
import { discoverAuthorization, type McpChallenge } from '../../src/sites/mcp-discovery.js';
import type { McpAuthorization } from '../../src/sites/mcp-state.js';
import { SiteHttpClient } from '../../src/sites/site-http.js';

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
  /** Registers (or uses the pre-registered client), authorizes with PKCE and `resource`, and exchanges the code. */
  authorize(authorization: McpAuthorization, scope: string | null): Promise<string>;
  close(): Promise<void>;
}

const REDIRECT_URI = 'https://agentsite.conformance.invalid/api/oauth/callback';

/** Builds the service's pieces with the command's own settings (loopback http allowed). */
export async function conformanceService(context: Record<string, unknown>): Promise<ConformanceService> {
  const http = new SiteHttpClient({
    siteCaCerts: undefined,
    siteAllowPrivateHosts: [],
    allowPrivateAddresses: true,
    allowLoopbackHttp: true,
  });
  const mcp = new McpClient(http);
  const fetchFn = mcp.fetch;
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
      return discoverAuthorization(fetchFn, endpoint, challenge);
    },
    async authorize(authorization, scope) {
      const metadata = await discoverAuthorizationServerMetadata(authorization.issuer, { fetchFn });
      const clientInformation =
        typeof context.client_id === 'string'
          ? {
              client_id: context.client_id,
              ...(typeof context.client_secret === 'string' ? { client_secret: context.client_secret } : {}),
            }
          : await registerClient(authorization.issuer, {
              metadata,
              clientMetadata: { client_name: 'agentsite', redirect_uris: [REDIRECT_URI], application_type: 'web' },
              fetchFn,
            });
      const { authorizationUrl, codeVerifier } = await startAuthorization(authorization.issuer, {
        metadata,
        clientInformation,
        redirectUrl: REDIRECT_URI,
        ...(scope === null ? {} : { scope }),
        state: 'conformance',
        resource: authorization.resource,
      });
      // The user's browser at the authorization server, which approves at once: its redirect carries the code.
      const consent = await fetch(authorizationUrl, { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location') ?? '', authorizationUrl);
      const code = callback.searchParams.get('code');
      if (code === null) {
        throw new Error(`the authorization server answered ${consent.status} without a code`);
      }
      const tokens = await exchangeAuthorization(authorization.issuer, {
        metadata,
        clientInformation,
        authorizationCode: code,
        iss: callback.searchParams.get('iss') ?? undefined,
        codeVerifier,
        redirectUri: REDIRECT_URI,
        resource: authorization.resource,
        fetchFn,
      });
      return tokens.access_token;
    },
    async close() {
      await mcp.onModuleDestroy();
      http.onModuleDestroy();
    },
  };
}
