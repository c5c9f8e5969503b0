import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field, formatDate, PageTitle } from '../../components/ui';
import { useSession } from '../../session/session';
import { PendingInvitations } from './invitations';
import { ASSIGNABLE_ROLES, type AssignableRole, MemberRow, TransferOwnership } from './members';

type Workspace = Schemas['WorkspaceResponseDto'];

/** One workspace: its members and their roles, inviting, and acting in it. */
export function WorkspacePage() {
  const { workspaceId = '' } = useParams();
  const session = useSession();
  const workspace = useLoad(
    () => unwrap(api.GET('/api/workspaces/{id}', { params: { path: { id: workspaceId } } })),
    [workspaceId],
  );
  const members = useLoad(
    () => unwrap(api.GET('/api/workspaces/{id}/members', { params: { path: { id: workspaceId } } })),
    [workspaceId],
  );
  const [transferred, setTransferred] = useState<string>();
  const w = workspace.data;
  const isAdmin = w !== undefined && (w.role === 'owner' || w.role === 'admin');
  // Only admins and the owner see the pending invitations (the others would get PERMISSION_DENIED).
  const invitations = useLoad(
    async () =>
      isAdmin
        ? unwrap(api.GET('/api/workspaces/{id}/invitations', { params: { path: { id: workspaceId } } }))
        : undefined,
    [workspaceId, isAdmin],
  );
  const reloadAll = async () => {
    await Promise.all([workspace.reload(), members.reload(), session.refreshWorkspaces()]);
  };
  return (
    <section>
      <PageTitle>{w === undefined ? 'Workspace' : `Workspace ${w.name}`}</PageTitle>
      <p>
        <Link to="/workspaces">All workspaces</Link>
      </p>
      <ErrorNote error={workspace.error} title="Could not load the workspace" />
      {workspace.loading && w === undefined ? <Busy label="Loading the workspace…" /> : null}
      {w === undefined ? null : (
        <>
          <dl className="facts">
            <dt>Your role</dt>
            <dd>{w.role}</dd>
            <dt>Created</dt>
            <dd>{formatDate(w.createdAt)}</dd>
          </dl>
          <div className="actions">
            {session.workspaceId === w.id ? (
              <>
                <span className="badge ok">You are acting in this workspace</span>
                <button type="button" className="secondary" onClick={() => session.switchWorkspace(null)}>
                  Act in my own account
                </button>
              </>
            ) : (
              <button type="button" onClick={() => session.switchWorkspace(w.id)}>
                Act in this workspace
              </button>
            )}
          </div>
        </>
      )}
      {transferred === undefined ? null : (
        <p className="notice" role="status">
          {transferred} now owns the workspace; you are an admin.
        </p>
      )}
      <section aria-labelledby="members-heading" className="panel">
        <h2 id="members-heading">Members</h2>
        <ErrorNote error={members.error} title="Could not load the members" />
        {members.loading && members.data === undefined ? <Busy label="Loading the members…" /> : null}
        {members.data === undefined || w === undefined ? null : (
          <table aria-labelledby="members-heading">
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.items.map((m) => (
                <MemberRow
                  key={m.userId}
                  workspace={w}
                  member={m}
                  isMe={m.userId === session.me?.id}
                  onChange={reloadAll}
                />
              ))}
            </tbody>
          </table>
        )}
      </section>
      {w === undefined || invitations.data === undefined ? null : (
        <PendingInvitations workspace={w} invitations={invitations.data.items} onChange={() => invitations.reload()} />
      )}
      {w === undefined ? null : <Invite workspace={w} onInvited={() => invitations.reload()} />}
      {w === undefined || members.data === undefined || w.role !== 'owner' ? null : (
        <TransferOwnership
          workspace={w}
          members={members.data.items}
          onChange={async (newOwner) => {
            await reloadAll();
            setTransferred(newOwner);
          }}
        />
      )}
    </section>
  );
}

/**
 * Inviting someone by email with a role (admins and the owner; PERMISSION_DENIED for the others). They
 * become a member when they accept; the answer is the same whether or not the email has an account.
 */
function Invite({ workspace, onInvited }: { workspace: Workspace; onInvited: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<AssignableRole>('member');
  const [added, setAdded] = useState<string>();
  const invite = useAction(async () => {
    const invitation = await unwrap(
      api.POST('/api/workspaces/{id}/members', {
        params: { path: { id: workspace.id } },
        body: { email: email.trim(), role },
      }),
    );
    setEmail('');
    setAdded(`Invited ${invitation.email} as ${invitation.role}: they join when they accept.`);
    await onInvited();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setAdded(undefined);
    void invite.run();
  };
  return (
    <section aria-labelledby="invite-heading" className="panel">
      <h2 id="invite-heading">Invite a member</h2>
      <p className="hint">
        The person sees the invitation on their Workspaces page once signed in with this email, and joins when they
        accept it. Admins manage members, sites and agents; members create and run agents and chat; viewers read agents
        and runs.
      </p>
      <form onSubmit={submit}>
        <Field label="Email of the person to invite" error={invite.error?.fieldMessage('email')}>
          {(p) => (
            <input
              {...p}
              type="email"
              required
              autoComplete="off"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          )}
        </Field>
        <Field label="Role for the new member" error={invite.error?.fieldMessage('role')}>
          {(p) => (
            <select {...p} value={role} onChange={(e) => setRole(e.target.value as AssignableRole)}>
              {ASSIGNABLE_ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorNote error={invite.error} title="Could not invite" fields={['email', 'role']} />
        {added === undefined ? null : (
          <p className="notice" role="status">
            {added}
          </p>
        )}
        <button type="submit" disabled={invite.busy}>
          {invite.busy ? 'Inviting…' : 'Invite member'}
        </button>
      </form>
    </section>
  );
}
