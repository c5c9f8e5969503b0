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
  };
  manifestFetchedAt: string;
  createdAt: string;
}

export interface TokenAnswer {
  tokenHint: string;
  expiresAt: string | null;
}

export function toSiteResponse(site: SiteEntity, credential: CredentialEntity | null): SiteResponse {
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
          },
    manifestFetchedAt: site.manifestFetchedAt.toISOString(),
    createdAt: site.createdAt.toISOString(),
  };
}
