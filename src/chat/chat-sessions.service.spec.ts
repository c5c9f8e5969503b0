import { describe, expect, it } from '@jest/globals';
import { standIn } from '../common/testing/stand-in.js';
import type { Settings } from '../config/settings.js';
import type { ManifestTool } from '../sites/manifest.js';
import type { CredentialEntity } from '../vault/credential.entity.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { ChatSessionsService } from './chat-sessions.service.js';
import type { ChatSessionEntity } from './chat.entities.js';
import type { ChatRepository } from './chat.repository.js';
import { FakeChatRepository } from './testing/fake-chat.repository.js';
import { TurnContextCache } from './turn-context-cache.js';

const SITE_ID = '7b0f4a52-4d53-4c8e-9d1e-1f2a3b4c5d6e';

function tool(name: string, scope: string): ManifestTool {
  return { name, description: '', scope, input_schema: { type: 'object', properties: {} } };
}

/** An MCP server connected by OAuth: its scopes are its own (`files:read`, …). */
function mcpServer(scopes: string[]): SiteEntity {
  return {
    id: SITE_ID,
    protocol: 'mcp',
    manifest: {
      name: 'Files',
      version: '1',
      description: '',
      server: { url: 'https://files.example.com/mcp' },
      auth: {
        type: 'oauth2',
        authorization_url: 'https://as.example.com/a',
        token_url: 'https://as.example.com/t',
        scopes,
      },
      tools: [tool('search', 'read'), tool('upload', 'write'), tool('purge', 'delete')],
    },
  } as unknown as SiteEntity;
}

function credential(granted: string[], requiredScope: string | null = null): CredentialEntity {
  return {
    siteId: SITE_ID,
    kind: 'oauth2',
    status: 'active',
    scopes: granted,
    requiredScope,
  } as unknown as CredentialEntity;
}

async function describeSession(site: SiteEntity, granted: CredentialEntity, tools: string[] | null) {
  const repository = new FakeChatRepository();
  repository.sites.push(site);
  repository.credentials.push(granted);
  const service = new ChatSessionsService(standIn<ChatRepository>(repository), new TurnContextCache(), {} as Settings);
  const session = {
    id: 's',
    userId: 'u',
    workspaceId: null,
    title: null,
    sites: [{ siteId: SITE_ID, tools }],
    expiresAt: new Date(),
    createdAt: new Date(),
  } as unknown as ChatSessionEntity;
  return (await service.describeSession(session)).sites[0]!;
}

describe('a session over an MCP server (scopes)', () => {
  const named = ['offline_access', 'files:read', 'files:write', 'files:delete'];

  it('needs only what its chosen tools need: a read-only session is satisfied by the read scope', async () => {
    const site = await describeSession(mcpServer(named), credential(['offline_access', 'files:read']), ['search']);
    expect(site).toEqual({ siteId: SITE_ID, name: 'Files', tools: ['search'], scopes: ['read'] });
  });

  it('says which of ours are missing where the server’s names tell, and where to connect again', async () => {
    const site = await describeSession(mcpServer(named), credential(['files:read']), ['search', 'upload']);
    expect(site.scopes).toEqual(['read', 'write']);
    expect(site.missingScopes).toEqual(['write']);
    expect(site.connectPath).toBe(`/api/vault/sites/${SITE_ID}/oauth/start`);
  });

  it('does not compare the server’s own scope names with ours', async () => {
    // Before MCP scopes were read as the server's: `repo` is not `read`, and every session looked short.
    const site = await describeSession(mcpServer(['repo']), credential(['repo']), null);
    expect(site.scopes).toEqual(['read', 'write', 'delete']);
    expect(site).not.toHaveProperty('missingScopes');
  });

  it('asks to connect again after a step-up the server asked for', async () => {
    const site = await describeSession(mcpServer(['repo']), credential(['repo'], 'admin:org'), null);
    expect(site.missingScopes).toEqual([]);
    expect(site.connectPath).toBe(`/api/vault/sites/${SITE_ID}/oauth/start`);
  });
});
