import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field, formatDate } from '../../components/ui';

type Workspace = Schemas['WorkspaceResponseDto'];
type Member = Schemas['MemberResponseDto'];

/** The roles a member can be given (the owner's comes only with a transfer of ownership). */
export type AssignableRole = Schemas['ChangeRoleDto']['role'];
const ROLE_NAMES = { admin: 'admin', member: 'member', viewer: 'viewer' } satisfies Record<AssignableRole, string>;
export const ASSIGNABLE_ROLES = Object.keys(ROLE_NAMES) as AssignableRole[];

/** One member, with its own role change and removal (their errors shown in the row). */
export function MemberRow({
  workspace,
  member,
  isMe,
  onChange,
}: {
  workspace: Workspace;
  member: Member;
  isMe: boolean;
  onChange: () => Promise<void>;
}) {
  const navigate = useNavigate();
  const [role, setRole] = useState<AssignableRole>(member.role === 'owner' ? 'admin' : member.role);
  const path = { id: workspace.id, userId: member.userId };
  const change = useAction(async () => {
    await unwrap(api.PATCH('/api/workspaces/{id}/members/{userId}', { params: { path }, body: { role } }));
    await onChange();
  });
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/api/workspaces/{id}/members/{userId}', { params: { path } }));
    if (isMe) {
      await navigate('/workspaces');
    }
    await onChange();
  });
  const who = member.name === null ? member.email : `${member.name} (${member.email})`;
  const error = change.error ?? remove.error;
  const mine = workspace.role;
  // The roles rules of src/workspaces: nobody changes or removes the owner (a transfer of ownership
  // comes first); admins and the owner manage the others; anyone but the owner may leave.
  const owner = member.role === 'owner';
  const mayChangeRole = !owner && (mine === 'owner' || mine === 'admin');
  const mayRemove = !owner && (isMe || mine === 'owner' || mine === 'admin');
  return (
    <tr>
      <td>
        {who}
        {isMe ? ' — you' : null}
      </td>
      <td>{member.role}</td>
      <td>{formatDate(member.joinedAt)}</td>
      <td>
        {owner ? (
          <p className="hint" data-testid="owner-note">
            {isMe ? (
              <>
                You own this workspace: to change your role or leave it, first hand it to another member under{' '}
                <a href="#transfer-heading">Transfer ownership</a>.
              </>
            ) : (
              'The owner: their role changes only when they transfer the ownership.'
            )}
          </p>
        ) : null}
        {mayChangeRole || mayRemove ? (
          <form
            className="actions"
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              void change.run();
            }}
          >
            {mayChangeRole ? (
              <>
                <label className="visually-hidden" htmlFor={`role-${member.userId}`}>
                  New role for {member.email}
                </label>
                <select
                  id={`role-${member.userId}`}
                  value={role}
                  onChange={(e) => setRole(e.target.value as AssignableRole)}
                >
                  {ASSIGNABLE_ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
                <button type="submit" className="secondary" disabled={change.busy}>
                  Change role<span className="visually-hidden"> of {member.email}</span>
                </button>
              </>
            ) : null}
            {mayRemove ? (
              <button type="button" className="danger" disabled={remove.busy} onClick={() => void remove.run()}>
                {isMe ? (
                  'Leave the workspace'
                ) : (
                  <>
                    Remove<span className="visually-hidden"> {member.email}</span>
                  </>
                )}
              </button>
            ) : null}
          </form>
        ) : null}
        <ErrorNote error={error} title={change.error ? 'Could not change the role' : 'Could not remove'} />
      </td>
    </tr>
  );
}

/** The owner hands the workspace to another member and becomes an admin. */
export function TransferOwnership({
  workspace,
  members,
  onChange,
}: {
  workspace: Workspace;
  members: Member[];
  /** Called with the new owner's email; this form goes away with the caller's owner role. */
  onChange: (newOwner: string) => Promise<void>;
}) {
  const others = members.filter((m) => m.role !== 'owner');
  const [userId, setUserId] = useState('');
  const transfer = useAction(async () => {
    await unwrap(
      api.POST('/api/workspaces/{id}/transfer-ownership', { params: { path: { id: workspace.id } }, body: { userId } }),
    );
    await onChange(members.find((m) => m.userId === userId)?.email ?? 'The member');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void transfer.run();
  };
  return (
    <section aria-labelledby="transfer-heading" className="panel">
      <h2 id="transfer-heading">Transfer ownership</h2>
      <p className="hint">
        The new owner (who must be on the Team plan) takes over; you stay as an admin. The owner’s role cannot be
        changed otherwise.
      </p>
      <form onSubmit={submit}>
        <Field label="New owner" error={transfer.error?.fieldMessage('userId')}>
          {(p) => (
            <select {...p} required value={userId} onChange={(e) => setUserId(e.target.value)}>
              <option value="">Choose a member…</option>
              {others.map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.email}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorNote error={transfer.error} title="Could not transfer ownership" fields={['userId']} />
        <button type="submit" className="danger" disabled={transfer.busy}>
          Transfer ownership
        </button>
      </form>
    </section>
  );
}
