import type { Http } from './http.js';
import type { TestUser } from './users.js';

/**
 * Makes `user` a member of a workspace the way people join one: an admin (`inviterToken`) invites
 * their email with a role, and they accept. Throws when either step does not succeed.
 */
export async function joinWorkspace(
  http: Http,
  workspaceId: string,
  inviterToken: string,
  user: Pick<TestUser, 'email' | 'token'>,
  role: string,
  headers?: Record<string, string>,
): Promise<void> {
  const invited = await http.post(
    `/api/workspaces/${workspaceId}/members`,
    { email: user.email, role },
    {
      token: inviterToken,
      headers,
    },
  );
  if (invited.status !== 201) {
    throw new Error(`invitation failed: ${invited.status} ${invited.text}`);
  }
  const accepted = await http.post(`/api/invitations/${invited.body.id}/accept`, undefined, { token: user.token });
  if (accepted.status !== 200) {
    throw new Error(`accepting the invitation failed: ${accepted.status} ${accepted.text}`);
  }
}
