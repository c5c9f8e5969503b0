import {
  checkResourceAllowed,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type FetchLike,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/client';
import { AppError } from '../common/app-error.js';
import type { McpAuthorization } from './mcp-state.js';

/** What an MCP server's 401 or 403 said (its `WWW-Authenticate` challenge, RFC 6750 / RFC 9728). */
export interface McpChallenge {
  status: number;
  resourceMetadataUrl: string | null;
  scope: string | null;
  error: string | null;
}

function invalid(message: string): AppError {
  return new AppError('MANIFEST_INVALID', `The MCP server's authorization metadata is not usable: ${message}`, [
    { field: 'authorization', message },
  ]);
}

/** The protected resource metadata (RFC 9728): the challenge's URL, else the well-known URIs of the endpoint. */
async function resourceMetadata(
  fetchFn: FetchLike,
  endpoint: string,
  challenge: McpChallenge,
): Promise<{ metadata: OAuthProtectedResourceMetadata | null; url: string | null }> {
  try {
    const metadata = await discoverOAuthProtectedResourceMetadata(
      endpoint,
      challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {},
      fetchFn,
    );
    return { metadata, url: challenge.resourceMetadataUrl };
  } catch (err) {
    if (err instanceof AppError) {
      throw err; // a refused address (INVALID_URL): never silently treated as "no metadata"
    }
    if (challenge.resourceMetadataUrl) {
      throw invalid(`the protected resource metadata could not be read (${(err as Error).message})`);
    }
    return { metadata: null, url: null };
  }
}

/**
 * What a 401 leads to (MCP authorization, 2025-06-18 and later): the protected resource metadata named
 * by the challenge (or at the endpoint's well-known URIs), then its authorization server's metadata
 * (RFC 8414, else OpenID discovery; the issuer must echo). Every request goes through `fetchFn` (the
 * guarded fetch): a metadata document or an authorization server at a refused address is INVALID_URL.
 * Null when the server names no authorization server (a bearer token pasted by the user is then the
 * way in); MANIFEST_INVALID when what it names is unusable (another resource, no endpoints).
 */
export async function discoverAuthorization(
  fetchFn: FetchLike,
  endpoint: string,
  challenge: McpChallenge,
): Promise<McpAuthorization | null> {
  const { metadata, url } = await resourceMetadata(fetchFn, endpoint, challenge);
  const issuer = metadata?.authorization_servers?.[0];
  if (metadata === null || issuer === undefined) {
    return null;
  }
  const resource = String(metadata.resource);
  if (!checkResourceAllowed({ requestedResource: endpoint, configuredResource: resource })) {
    throw invalid(`the metadata describes another resource (${resource})`);
  }
  let server;
  try {
    server = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
  } catch (err) {
    if (err instanceof AppError) {
      throw err;
    }
    throw invalid(`the authorization server's metadata could not be read (${(err as Error).message})`);
  }
  if (server === undefined) {
    throw invalid(`the authorization server ${issuer} publishes no metadata`);
  }
  const revocation = (server as { revocation_endpoint?: unknown }).revocation_endpoint;
  const scopes = (metadata.scopes_supported as string[] | undefined) ?? server.scopes_supported ?? null;
  return {
    resource,
    resourceMetadataUrl: url ?? new URL('/.well-known/oauth-protected-resource', endpoint).toString(),
    issuer: String(server.issuer),
    authorizationEndpoint: String(server.authorization_endpoint),
    tokenEndpoint: String(server.token_endpoint),
    revocationEndpoint: typeof revocation === 'string' ? revocation : null,
    registrationEndpoint: server.registration_endpoint ? String(server.registration_endpoint) : null,
    clientIdMetadataDocumentSupported:
      (server as { client_id_metadata_document_supported?: boolean }).client_id_metadata_document_supported === true,
    issParameterSupported:
      (server as { authorization_response_iss_parameter_supported?: boolean })
        .authorization_response_iss_parameter_supported === true,
    codeChallengeMethods: server.code_challenge_methods_supported ?? [],
    tokenEndpointAuthMethods: server.token_endpoint_auth_methods_supported ?? null,
    scopesSupported: scopes,
    challengeScope: challenge.scope,
  };
}
