/**
 * The pieces of the service the conformance command drives, behind the few calls the scenarios make.
 */
import {
  Client,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  type FetchLike,
  registerClient,
  startAuthorization,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { McpAuthorization } from '../../src/sites/mcp-state.js';

/** A 401 or 403 of the MCP server, as its WWW-Authenticate said it. */
export interface McpChallengeLike {
  status: number;
  resourceMetadataUrl: string | null;
  scope: string | null;
  error: string | null;
}

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
  let lastChallenge: McpChallengeLike | null = null;
  const fetchFn: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    if (response.status === 401 || response.status === 403) {
      const params = extractWWWAuthenticateParams(response);
      lastChallenge = {
        status: response.status,
        resourceMetadataUrl: params.resourceMetadataUrl?.toString() ?? null,
        scope: params.scope ?? null,
        error: params.error ?? null,
      };
    }
    return response;
  };
  const open = async (endpoint: string, token: string | null): Promise<Client> => {
    const client = new Client({ name: 'agentsite', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
      fetch: fetchFn,
      requestInit: token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return client;
  };
  /** The challenge of a refusal, or the error again. */
  const refused = (err: unknown): McpChallengeLike => {
    if (lastChallenge === null) {
      throw err;
    }
    const challenge = lastChallenge;
    lastChallenge = null;
    return challenge;
  };
  return {
    async probe(endpoint, token) {
      lastChallenge = null;
      try {
        const client = await open(endpoint, token);
        const { tools } = await client.listTools();
        await client.close();
        return { kind: 'tools', tools: tools as ListedTool[] };
      } catch (err) {
        return { kind: 'unauthorized', challenge: refused(err) };
      }
    },
    async call(endpoint, token, tool, input) {
      lastChallenge = null;
      try {
        const client = await open(endpoint, token);
        const result = await client.callTool({ name: tool, arguments: input });
        await client.close();
        const text = JSON.stringify(result.content);
        return { kind: 'result', isError: result.isError === true, text };
      } catch (err) {
        return { kind: 'unauthorized', challenge: refused(err) };
      }
    },
    async discover(endpoint, challenge) {
      const resource = await discoverOAuthProtectedResourceMetadata(
        endpoint,
        challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {},
        fetchFn,
      );
      const issuer = resource.authorization_servers?.[0];
      if (issuer === undefined) {
        return null;
      }
      const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
      if (metadata === undefined) {
        return null;
      }
      return {
        resource: resource.resource,
        resourceMetadataUrl: challenge.resourceMetadataUrl,
        issuer: metadata.issuer,
        authorizationEndpoint: metadata.authorization_endpoint,
        tokenEndpoint: metadata.token_endpoint,
        revocationEndpoint: 'revocation_endpoint' in metadata ? (metadata.revocation_endpoint ?? null) : null,
        registrationEndpoint: metadata.registration_endpoint ?? null,
        clientIdMetadataDocumentSupported: metadata.client_id_metadata_document_supported === true,
        codeChallengeMethods: metadata.code_challenge_methods_supported ?? [],
        tokenEndpointAuthMethods: metadata.token_endpoint_auth_methods_supported ?? null,
        scopesSupported: resource.scopes_supported ?? metadata.scopes_supported ?? null,
        challengeScope: challenge.scope,
      };
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
    async close() {},
  };
}
