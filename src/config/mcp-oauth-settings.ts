/** How the service authenticates at an authorization server's token endpoint with a client given in MCP_OAUTH_CLIENTS. */
export const MCP_TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;
export type McpTokenEndpointAuthMethod = (typeof MCP_TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** A client registered in advance at an MCP server's authorization server (MCP_OAUTH_CLIENTS). */
export interface McpOAuthClientSetting {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: McpTokenEndpointAuthMethod;
}

const KEYS = new Set(['clientId', 'clientSecret', 'tokenEndpointAuthMethod']);

/**
 * MCP_OAUTH_CLIENTS: a JSON object keyed by authorization server issuer (an https URL, as its metadata
 * says it) → `{clientId, clientSecret?, tokenEndpointAuthMethod?}`. The method defaults to
 * `client_secret_post` with a secret and `none` without. The values are never repeated in a problem:
 * they hold secrets.
 */
export function parseMcpOAuthClients(
  raw: string | undefined,
  problems: string[],
): Record<string, McpOAuthClientSetting> {
  if (raw === undefined) {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push('MCP_OAUTH_CLIENTS must be a JSON object keyed by issuer URL');
    return {};
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push('MCP_OAUTH_CLIENTS must be a JSON object keyed by issuer URL');
    return {};
  }
  const clients: Record<string, McpOAuthClientSetting> = {};
  for (const [issuer, entry] of Object.entries(parsed as Record<string, unknown>)) {
    const client = parseEntry(issuer, entry, problems);
    if (client !== undefined) {
      clients[issuer.replace(/\/+$/, '')] = client;
    }
  }
  return clients;
}

function parseEntry(issuer: string, entry: unknown, problems: string[]): McpOAuthClientSetting | undefined {
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol !== 'https:' || url.search !== '' || url.hash !== '') {
    problems.push('MCP_OAUTH_CLIENTS: each key must be an https issuer URL without query or fragment');
    return undefined;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    problems.push(
      `MCP_OAUTH_CLIENTS["${issuer}"] must be an object {clientId, clientSecret?, tokenEndpointAuthMethod?}`,
    );
    return undefined;
  }
  const fields = entry as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) {
    problems.push(`MCP_OAUTH_CLIENTS["${issuer}"] has unknown field(s) ${unknown.join(', ')}`);
  }
  const { clientId, clientSecret, tokenEndpointAuthMethod } = fields;
  if (typeof clientId !== 'string' || clientId.trim() === '') {
    problems.push(`MCP_OAUTH_CLIENTS["${issuer}"].clientId must be a non-empty string`);
    return undefined;
  }
  if (clientSecret !== undefined && (typeof clientSecret !== 'string' || clientSecret === '')) {
    problems.push(`MCP_OAUTH_CLIENTS["${issuer}"].clientSecret must be a non-empty string when given`);
    return undefined;
  }
  const method = tokenEndpointAuthMethod ?? (clientSecret === undefined ? 'none' : 'client_secret_post');
  if (!(MCP_TOKEN_ENDPOINT_AUTH_METHODS as readonly unknown[]).includes(method)) {
    problems.push(
      `MCP_OAUTH_CLIENTS["${issuer}"].tokenEndpointAuthMethod must be one of ${MCP_TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}`,
    );
    return undefined;
  }
  if ((method === 'none') !== (clientSecret === undefined)) {
    problems.push(
      `MCP_OAUTH_CLIENTS["${issuer}"]: a clientSecret goes with client_secret_post or client_secret_basic, and only with them`,
    );
    return undefined;
  }
  return {
    clientId,
    ...(typeof clientSecret === 'string' ? { clientSecret } : {}),
    tokenEndpointAuthMethod: method as McpTokenEndpointAuthMethod,
  };
}
