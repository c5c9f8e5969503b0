/** Moving one of the user's own sites into a workspace (the site page, and the agent's move panel). */
import { api, unwrap } from '../../api/client';
import type { Workspace } from '../../session/session';
import type { Site } from './connection';

/** Only a workspace's owner and admins may bring a site into it. */
export function canBringSites(workspace: Workspace): boolean {
  return workspace.role === 'owner' || workspace.role === 'admin';
}

/**
 * Moves a site of the user's own vault, with its stored connection, into the workspace: it keeps its
 * id (an agent that uses it still names it) and leaves the user's own vault.
 */
export function shareSite(siteId: string, workspaceId: string): Promise<Site> {
  return unwrap(
    api.POST('/api/vault/sites/{id}/share', {
      params: { path: { id: siteId }, header: { 'X-Workspace-Id': workspaceId } },
    }),
  );
}

/** The sites of a workspace's vault (the API gives 200 a page; a vault holds fewer). */
export async function workspaceSites(workspaceId: string): Promise<Site[]> {
  const page = await unwrap(
    api.GET('/api/vault/sites', {
      params: { query: { limit: 200 }, header: { 'X-Workspace-Id': workspaceId } },
    }),
  );
  return page.items;
}

/** What moving a site means, in the words both places use. */
export function moveConsequences(siteName: string, workspaceName: string): string {
  return (
    `${siteName} and its stored connection move into ${workspaceName}: its members' chats and agents can ` +
    `use it there. It leaves your own vault, so your own chats and agents can no longer use it.`
  );
}
