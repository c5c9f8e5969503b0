import { api, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate } from '../../components/ui';

type Workspace = Schemas['WorkspaceResponseDto'];
type Invitation = Schemas['InvitationResponseDto'];

/** A workspace's pending invitations, each with its Revoke button (admins and the owner). */
export function PendingInvitations({
  workspace,
  invitations,
  onChange,
}: {
  workspace: Workspace;
  invitations: Invitation[];
  onChange: () => Promise<void>;
}) {
  return (
    <section aria-labelledby="pending-heading" className="panel">
      <h2 id="pending-heading">Pending invitations</h2>
      {invitations.length === 0 ? (
        <p>No invitation is waiting for an answer.</p>
      ) : (
        <table aria-labelledby="pending-heading">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <PendingRow key={i.id} workspace={workspace} invitation={i} onChange={onChange} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function PendingRow({
  workspace,
  invitation,
  onChange,
}: {
  workspace: Workspace;
  invitation: Invitation;
  onChange: () => Promise<void>;
}) {
  const revoke = useAction(async () => {
    await unwrap(
      api.DELETE('/api/workspaces/{id}/invitations/{invitationId}', {
        params: { path: { id: workspace.id, invitationId: invitation.id } },
      }),
    );
    await onChange();
  });
  return (
    <tr>
      <td>{invitation.email}</td>
      <td>{invitation.role}</td>
      <td>{formatDate(invitation.expiresAt)}</td>
      <td>
        <button type="button" className="danger" disabled={revoke.busy} onClick={() => void revoke.run()}>
          Revoke<span className="visually-hidden"> the invitation of {invitation.email}</span>
        </button>
        <ErrorNote error={revoke.error} title="Could not revoke" />
      </td>
    </tr>
  );
}

/** The signed-in user's invitations to workspaces, to accept or decline. */
export function MyInvitations({ onJoined }: { onJoined: () => Promise<void> }) {
  const list = useLoad(() => unwrap(api.GET('/api/invitations')), []);
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="invitations-heading" className="panel">
      <h2 id="invitations-heading">Invitations</h2>
      <ErrorNote error={list.error} title="Could not load your invitations" />
      {list.loading && list.data === undefined ? <Busy label="Loading your invitations…" /> : null}
      {list.data !== undefined && items.length === 0 ? <p>No invitation is waiting for you.</p> : null}
      {items.length > 0 ? (
        <table aria-labelledby="invitations-heading">
          <thead>
            <tr>
              <th scope="col">Workspace</th>
              <th scope="col">Role</th>
              <th scope="col">Invited by</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <InvitationRow
                key={i.id}
                invitation={i}
                onAnswered={async (joined) => {
                  await list.reload();
                  if (joined) {
                    await onJoined();
                  }
                }}
              />
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

function InvitationRow({
  invitation,
  onAnswered,
}: {
  invitation: Invitation;
  onAnswered: (joined: boolean) => Promise<void>;
}) {
  const path = { id: invitation.id };
  const accept = useAction(async () => {
    await unwrap(api.POST('/api/invitations/{id}/accept', { params: { path } }));
    await onAnswered(true);
  });
  const decline = useAction(async () => {
    await unwrap(api.POST('/api/invitations/{id}/decline', { params: { path } }));
    await onAnswered(false);
  });
  const busy = accept.busy || decline.busy;
  return (
    <tr>
      <td>{invitation.workspaceName}</td>
      <td>{invitation.role}</td>
      <td>{invitation.invitedByEmail ?? '—'}</td>
      <td>
        <div className="actions">
          <button type="button" disabled={busy} onClick={() => void accept.run()}>
            Accept<span className="visually-hidden"> the invitation to {invitation.workspaceName}</span>
          </button>
          <button type="button" className="secondary" disabled={busy} onClick={() => void decline.run()}>
            Decline<span className="visually-hidden"> the invitation to {invitation.workspaceName}</span>
          </button>
        </div>
        <ErrorNote
          error={accept.error ?? decline.error}
          title={accept.error ? 'Could not accept' : 'Could not decline'}
        />
      </td>
    </tr>
  );
}
