import type { Client, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { errors, interactionPolicy } from 'oidc-provider';
import type { FetchLike } from '../sites/mcp-fetch.js';
import type { ArtifactStore } from './oidc-adapter.js';
import { cookieKeys, signingJwks } from './keys.js';

/** The one scope of agentsite's MCP endpoint: act as the user (in the workspace chosen on the consent page). */
export const MCP_SCOPE = 'mcp';

/** How long a consent page may stay open (seconds). */
const INTERACTION_SECONDS = 30 * 60;
/** How long an authorization code is good for (seconds). */
const CODE_SECONDS = 60;
/** The provider's own browser session (between its authorization endpoint and the consent's resume). */
const SESSION_SECONDS = 24 * 60 * 60;
/**
 * A grant (a connected app) has no end of its own: it lasts until the user revokes it, an idle
 * client's refresh token running out ends its use. oidc-provider wants a number: ten years.
 */
const GRANT_SECONDS = 10 * 365 * 24 * 60 * 60;

export interface ProviderOptions {
  /** PUBLIC_BASE_URL: the consent page and the resource are built from it. */
  publicBaseUrl: string;
  /** `{PUBLIC_BASE_URL}/mcp`, the only resource tokens are issued for. */
  resource: string;
  jwtSecret: string;
  accessTokenSeconds: number;
  refreshTokenDays: number;
  store: ArtifactStore;
  /** The service's guarded fetch (SSRF guard, TLS settings, size cap) for Client ID Metadata Documents. */
  fetch: FetchLike;
}

/** Asks the user every time (the consent page picks the workspace), until the consent has produced a grant. */
function interactionPolicyOf(): interactionPolicy.DefaultPolicy {
  const { Check, base } = interactionPolicy;
  const policy = base();
  policy
    .get('consent')
    ?.checks.add(
      new Check('agentsite_consent', 'the user connects the app on the consent page', (ctx) =>
        ctx.oidc.result?.consent?.grantId === undefined ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
      ),
    );
  return policy;
}

/** Errors of the provider's endpoints, as OAuth error JSON (never a page, a stack or a 500 body of ours). */
function renderError(ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }): void {
  ctx.type = 'application/json';
  ctx.body = { error: out.error ?? 'server_error', error_description: out.error_description };
}

/**
 * The configuration of oidc-provider for MCP clients: authorization code with PKCE (S256) only,
 * opaque access tokens for the one resource `{base}/mcp`, rotated refresh tokens, dynamic client
 * registration and Client ID Metadata Documents, revocation; nothing else (no implicit, device,
 * client credentials, introspection, userinfo or ID tokens).
 */
export function providerConfiguration(options: ProviderOptions): Configuration {
  const { resource } = options;
  const configuration: Configuration & Record<string, unknown> = {
    adapter: (model: string) => options.store.adapterFor(model),
    findAccount: (_ctx, sub) => Promise.resolve({ accountId: sub, claims: () => ({ sub }) }),
    jwks: signingJwks(options.jwtSecret) as Configuration['jwks'],
    cookies: {
      keys: cookieKeys(options.jwtSecret),
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
      names: { session: '_mcp_session', interaction: '_mcp_interaction', resume: '_mcp_resume' },
    },
    responseTypes: ['code'],
    scopes: [MCP_SCOPE],
    claims: { sub: null },
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: 'EdDSA',
    },
    enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
    clientBasedCORS: () => true,
    renderError,
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx: unknown, client: Client, token: { clientId?: string }) =>
          token.clientId === client.clientId,
      },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: MCP_SCOPE,
            audience: resource,
            accessTokenTTL: options.accessTokenSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    } as Configuration['features'],
    fetch: options.fetch,
    issueRefreshToken: (_ctx, client) => Promise.resolve(client.grantTypeAllowed('refresh_token')),
    rotateRefreshToken: () => true,
    expiresWithSession: () => Promise.resolve(false),
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId === undefined ? undefined : ctx.oidc.provider.Grant.find(grantId);
    },
    interactions: {
      url: (_ctx, interaction) => `${options.publicBaseUrl}/connect/${interaction.uid}`,
      policy: interactionPolicyOf(),
    },
    ttl: {
      AccessToken: options.accessTokenSeconds,
      AuthorizationCode: CODE_SECONDS,
      RefreshToken: options.refreshTokenDays * 24 * 60 * 60,
      Interaction: INTERACTION_SECONDS,
      Session: SESSION_SECONDS,
      Grant: GRANT_SECONDS,
      IdToken: 60 * 60,
      ClientCredentials: 10 * 60,
      DeviceCode: 10 * 60,
      BackchannelAuthenticationRequest: 10 * 60,
    },
  };
  return configuration;
}
