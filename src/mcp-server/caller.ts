/**
 * Who is calling agentsite's MCP endpoint (/mcp): the contract between the endpoint (src/mcp-server)
 * and whatever authenticates its bearer tokens (the authorization server for MCP clients, or the
 * service's own API tokens when MCP_ALLOW_API_TOKENS allows them).
 */

/** A bearer token at /mcp, once verified: the user, the workspace the grant acts in, and the grant. */
export interface McpCaller {
  userId: string;
  /** The Team workspace chosen on the consent page; null: the user's personal scope. */
  workspaceId: string | null;
  /** The OAuth grant (a connected app) the token belongs to; null for an API token. */
  grantId: string | null;
  /** The OAuth client's id (a URL for a Client ID Metadata Document); null for an API token. */
  clientId: string | null;
  /** The scopes granted (empty for an API token). */
  scopes: string[];
  /** When the access token expires. */
  expiresAt: Date;
}

/**
 * Verifies an access token issued by the service's authorization server for the resource
 * `{PUBLIC_BASE_URL}/mcp`. Answers undefined for any token it did not issue, that expired, was
 * revoked, belongs to a revoked grant, or is bound to another audience. It may record the grant's
 * last use (at most once a minute).
 */
export interface McpTokenVerifier {
  verify(token: string): Promise<McpCaller | undefined>;
}

/** Nest injection token of the McpTokenVerifier (provided by the MCP authorization server's module). */
export const MCP_TOKEN_VERIFIER = Symbol('MCP_TOKEN_VERIFIER');

/** The MCP endpoint's URL: the resource MCP clients' tokens are bound to (RFC 8707). */
export function mcpResourceUrl(publicBaseUrl: string): string {
  return `${publicBaseUrl}/mcp`;
}

/** Where the endpoint's protected-resource metadata is published (RFC 9728, path-inserted). */
export function mcpProtectedResourceMetadataUrl(publicBaseUrl: string): string {
  const base = new URL(publicBaseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  return `${base.origin}/.well-known/oauth-protected-resource${prefix}/mcp`;
}
