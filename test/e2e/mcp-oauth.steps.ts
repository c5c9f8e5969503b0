import { expect } from '@jest/globals';
import type { OAuthPeer } from '../fixtures/mcp/oauth-peer.js';
import type { Http } from '../utils/http.js';
import type { TestUser } from '../utils/users.js';

/** Adds the peer's MCP endpoint by its bare URL: its 401 leaves it needing a connection, its authorization discovered. */
export async function addMcpSite(http: Http, user: TestUser, peer: OAuthPeer): Promise<string> {
  const added = await http.post('/api/vault/sites', { url: peer.endpoint }, { token: user.token });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({ protocol: 'mcp', status: 'needs_connection', tools: [] });
  return added.body.id as string;
}
