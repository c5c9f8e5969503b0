import type { TestCa } from '../../examples/site/tls.js';
import type { McpServerState } from '../../src/sites/mcp-state.js';
import type { OAuthPeer } from '../fixtures/mcp/oauth-peer.js';
import { sql } from '../utils/db.js';
import type { Http } from '../utils/http.js';
import { httpsRequest } from '../utils/site.js';
import type { TestUser } from '../utils/users.js';

/**
 * Adds the peer's MCP endpoint to the user's vault. Until the MCP client lands (s18-client), the row
 * is written as it would (manifest snapshot with no tools, the authorization discovered from the
 * peer's metadata); afterwards, through POST /api/vault/sites.
 */
export async function addMcpSite(http: Http, user: TestUser, peer: OAuthPeer, ca: TestCa): Promise<string> {
  void http;
  const metadata = JSON.parse((await httpsRequest(ca, `${peer.url}/.well-known/openid-configuration`)).body) as Record<
    string,
    unknown
  >;
  const mcp: McpServerState = {
    endpoint: peer.endpoint,
    protocolVersion: null,
    toolsFreshUntil: null,
    authorization: {
      resource: peer.endpoint,
      resourceMetadataUrl: peer.resourceMetadataUrl,
      issuer: metadata.issuer as string,
      authorizationEndpoint: metadata.authorization_endpoint as string,
      tokenEndpoint: metadata.token_endpoint as string,
      revocationEndpoint: (metadata.revocation_endpoint as string | undefined) ?? null,
      registrationEndpoint: (metadata.registration_endpoint as string | undefined) ?? null,
      clientIdMetadataDocumentSupported: false,
      codeChallengeMethods: (metadata.code_challenge_methods_supported as string[] | undefined) ?? [],
      tokenEndpointAuthMethods: (metadata.token_endpoint_auth_methods_supported as string[] | undefined) ?? null,
      scopesSupported: ['tools:read', 'tools:admin'],
      challengeScope: 'tools:read',
    },
  };
  const manifest = {
    name: 'OAuth Peer',
    version: '1.0.0',
    description: '',
    server: { url: peer.endpoint },
    auth: {
      type: 'oauth2',
      authorization_url: mcp.authorization!.authorizationEndpoint,
      token_url: mcp.authorization!.tokenEndpoint,
      scopes: ['tools:read', 'tools:admin'],
      issuer: mcp.authorization!.issuer,
    },
    tools: [
      { name: 'whoami', description: '', input_schema: { type: 'object', properties: {} }, scope: 'read' },
      { name: 'reset_counter', description: '', input_schema: { type: 'object', properties: {} }, scope: 'delete' },
    ],
  };
  const rows = await sql<{ id: string }>(
    `INSERT INTO sites (user_id, url, protocol, manifest, mcp, manifest_fetched_at)
     VALUES ($1, $2, 'mcp', $3, $4, now()) RETURNING id`,
    [user.id, `${peer.endpoint}#${Math.random().toString(36).slice(2)}`, manifest, mcp],
  );
  return rows[0]!.id;
}
