import { describe, expect, it } from '@jest/globals';
import type { FetchLike } from '@modelcontextprotocol/client';
import { discoverAuthorization } from './mcp-discovery.js';

const ENDPOINT = 'https://mcp.example.com/mcp';
const ISSUER = 'https://auth.example.com';

/** A server whose protected resource and authorization server metadata are these documents. */
function serverWith(asMetadata: Record<string, unknown>): FetchLike {
  const documents: Record<string, unknown> = {
    'https://mcp.example.com/.well-known/oauth-protected-resource/mcp': {
      resource: ENDPOINT,
      authorization_servers: [ISSUER],
    },
    [`${ISSUER}/.well-known/oauth-authorization-server`]: {
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/authorize`,
      token_endpoint: `${ISSUER}/token`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      ...asMetadata,
    },
  };
  return async (url) => {
    const document = documents[String(url)];
    return document === undefined
      ? new Response('not found', { status: 404 })
      : new Response(JSON.stringify(document), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

const CHALLENGE = { status: 401, resourceMetadataUrl: null, scope: null, error: null };

describe('discoverAuthorization: RFC 9207 iss', () => {
  it('records authorization_response_iss_parameter_supported, false when absent or not true', async () => {
    const said = await discoverAuthorization(
      serverWith({ authorization_response_iss_parameter_supported: true }),
      ENDPOINT,
      CHALLENGE,
    );
    expect(said).toMatchObject({ issuer: ISSUER, issParameterSupported: true });
    const silent = await discoverAuthorization(serverWith({}), ENDPOINT, CHALLENGE);
    expect(silent?.issParameterSupported).toBe(false);
    const odd = await discoverAuthorization(
      serverWith({ authorization_response_iss_parameter_supported: 'yes' }),
      ENDPOINT,
      CHALLENGE,
    );
    expect(odd?.issParameterSupported).toBe(false);
  });
});
