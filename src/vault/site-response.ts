import type { McpToolAnnotations, SiteProtocol } from '../sites/mcp-state.js';
import { siteStatus } from '../sites/mcp-tools.js';
import { deriveScope, type SiteScope } from '../sites/scopes.js';
import type { CredentialEntity, CredentialKind } from './credential.entity.js';
import type { SiteEntity } from './site.entity.js';

export interface SiteResponse {
  id: string;
  url: string;
  protocol: SiteProtocol;
  status: 'ready' | 'needs_connection';
  name: string;
  version: string;
  description: string;
  serverUrl: string;
  auth: { type: 'bearer' | 'oauth2'; scopes?: string[] };
  tools: Array<{
    name: string;
    title?: string;
    description: string;
    inputSchema: unknown;
    scope: SiteScope;
    annotations?: McpToolAnnotations;
  }>;
  credential: {
    kind: CredentialKind | null;
    status?: CredentialEntity['status'];
    tokenHint?: string;
    expiresAt?: string | null;
    scopes?: string[] | null;
    requiredScope?: string | null;
    connection?: CredentialConnection;
  };
  manifestFetchedAt: string;
  createdAt: string;
}

/**
 * Whether the stored credential can be used now, and until when: `expired` once an access token that
 * cannot be renewed (a bearer token with an expiry, an OAuth grant without a refresh token) is past its
 * expiry; `reconnect_required` once the site refused to renew it.
 */
export type ConnectionStatus = 'connected' | 'expired' | 'reconnect_required';

export interface CredentialConnection {
  status: ConnectionStatus;
  /** When the stored access ends (null: no expiry known); renewed automatically when refreshable. */
  expiresAt: string | null;
  /** OAuth with a refresh token: the service renews the access itself; otherwise reconnect by expiresAt. */
  refreshable: boolean;
}

/** The connection of a stored credential at `now`; `refreshable`: it holds an OAuth refresh token. */
export function connectionOf(
  credential: CredentialEntity,
  refreshable: boolean,
  now = Date.now(),
): CredentialConnection {
  const expiresAt = credential.expiresAt;
  const status: ConnectionStatus =
    credential.status === 'reauth_required'
      ? 'reconnect_required'
      : !refreshable && expiresAt !== null && expiresAt.getTime() <= now
        ? 'expired'
        : 'connected';
  return { status, expiresAt: expiresAt?.toISOString() ?? null, refreshable };
}

export interface TokenAnswer {
  tokenHint: string;
  expiresAt: string | null;
}

/** `refreshable`: the credential holds an OAuth refresh token (see CredentialsService.refreshable). */
export function toSiteResponse(
  site: SiteEntity,
  credential: CredentialEntity | null,
  refreshable = false,
): SiteResponse {
  const { manifest } = site;
  return {
    id: site.id,
    url: site.url,
    protocol: site.protocol,
    status: siteStatus(site),
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    serverUrl: manifest.server.url,
    auth: manifest.auth.type === 'oauth2' ? { type: 'oauth2', scopes: manifest.auth.scopes } : { type: 'bearer' },
    tools: manifest.tools.map((tool) => ({
      name: tool.name,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema: tool.input_schema,
      scope: deriveScope(tool),
      ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    })),
    credential:
      credential === null
        ? { kind: null }
        : {
            kind: credential.kind,
            status: credential.status,
            tokenHint: credential.tokenHint,
            expiresAt: credential.expiresAt?.toISOString() ?? null,
            ...(credential.kind === 'oauth2' ? { scopes: credential.scopes } : {}),
            ...(site.protocol === 'mcp' ? { requiredScope: credential.requiredScope ?? null } : {}),
            connection: connectionOf(credential, refreshable),
          },
    manifestFetchedAt: site.manifestFetchedAt.toISOString(),
    createdAt: site.createdAt.toISOString(),
  };
}
