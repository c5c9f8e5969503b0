/**
 * What the vault keeps of an MCP server beyond the manifest-shaped snapshot in `sites.manifest`
 * (`sites.mcp`, null for agentsite sites). The snapshot holds what every feature reads of a site
 * (name, version, description, `server.url` = the MCP endpoint, `auth`, `tools`); this holds what
 * only the MCP client and the MCP authorization code need.
 */
export interface McpServerState {
  /** The MCP endpoint the service speaks to (the URL the user gave, normalised). */
  endpoint: string;
  /** The revision the server spoke at the last listing ('2026-07-28', '2025-11-25', '2025-06-18', …); null before any. */
  protocolVersion: string | null;
  /** What the server's 401 led to (RFC 9728 + RFC 8414); null when it never asked for authorization. */
  authorization: McpAuthorization | null;
  /** Until when the tool list may be served without listing again (the list's cache hint, at most a day). */
  toolsFreshUntil: string | null;
}

/** The protected resource and its authorization server, as discovered from the server's 401. */
export interface McpAuthorization {
  /** The protected resource's identifier (RFC 9728 `resource`), sent as RFC 8707 `resource` on every token request. */
  resource: string;
  /** Where the protected resource metadata was read (from `WWW-Authenticate`, or a well-known URI). */
  resourceMetadataUrl: string | null;
  /** The authorization server's issuer identifier, checked against a redirect's `iss` (RFC 9207). */
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  registrationEndpoint: string | null;
  /** The server advertised `client_id_metadata_document_supported`. */
  clientIdMetadataDocumentSupported: boolean;
  /**
   * The server advertised `authorization_response_iss_parameter_supported` (RFC 9207): a redirect
   * without `iss` is then refused. Snapshots stored before this field read as false.
   */
  issParameterSupported: boolean;
  /** `code_challenge_methods_supported` (the flow refuses a server without S256). */
  codeChallengeMethods: string[];
  /** `token_endpoint_auth_methods_supported`, when given. */
  tokenEndpointAuthMethods: string[] | null;
  /** The protected resource's (else the authorization server's) `scopes_supported`. */
  scopesSupported: string[] | null;
  /** The `scope` of the 401's `WWW-Authenticate` challenge, when it named one. */
  challengeScope: string | null;
}

/** MCP tool annotations as the server sent them (hints; never trusted for security). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** An MCP tool call's result as the server sent it (cut to 64 KiB for the timeline and the model). */
export interface McpToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
}

export type SiteProtocol = 'agentsite' | 'mcp';
export const SITE_PROTOCOLS = ['agentsite', 'mcp'] as const satisfies readonly SiteProtocol[];
