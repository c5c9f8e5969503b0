import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field, formatDate, PageTitle } from '../../components/ui';
import { useSession } from '../../session/session';
import { countGate, LimitNote, useBilling } from '../billing/gates';
import { MyInvitations } from './invitations';

/** The caller's workspaces with their role in each, their invitations to others, and the form that creates one (Team plan). */
export function WorkspacesPage() {
  const { refreshWorkspaces, workspaceId, switchWorkspace } = useSession();
  const list = useLoad(() => unwrap(api.GET('/api/workspaces')), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ id: string; name: string }>();
  const create = useAction(async () => {
    const workspace = await unwrap(api.POST('/api/workspaces', { body: { name: name.trim() } }));
    setName('');
    setCreated(workspace);
    // The header's workspace switch lists it from now on.
    await Promise.all([list.reload(), refreshWorkspaces()]);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCreated(undefined);
    void create.run();
  };
  const items = list.data?.items ?? [];
  // The plan says beforehand whether another workspace can be made (Team plan: a few, each owned).
  const billing = useBilling();
  const owned = list.data === undefined ? undefined : items.filter((w) => w.role === 'owner').length;
  const gate = countGate(billing.data, owned, (l) => l.workspaces);
  return (
    <section>
      <PageTitle>Workspaces</PageTitle>
      <p className="hint">
        A workspace shares sites, agents, runs and chats among its members (Team plan). Choose “Acting in” in the
        header, or “Act in this workspace”, to work in one.
      </p>
      <ErrorNote error={list.error} title="Could not load your workspaces" />
      {list.loading && list.data === undefined ? <Busy label="Loading your workspaces…" /> : null}
      {list.data !== undefined && items.length === 0 ? <p>You are not a member of any workspace.</p> : null}
      {items.length > 0 ? (
        <table aria-label="Your workspaces">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Your role</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((w) => (
              <tr key={w.id}>
                <td>
                  <Link to={`/workspaces/${w.id}`}>{w.name}</Link>
                </td>
                <td>{w.role}</td>
                <td>{formatDate(w.createdAt)}</td>
                <td>
                  {workspaceId === w.id ? (
                    <span className="badge ok">Active</span>
                  ) : (
                    <button type="button" className="secondary" onClick={() => switchWorkspace(w.id)}>
                      Act in {w.name}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      <MyInvitations onJoined={() => Promise.all([list.reload(), refreshWorkspaces()]).then(() => undefined)} />

      <section aria-labelledby="create-heading" className="panel">
        <h2 id="create-heading">Create a workspace</h2>
        {gate === null ? null : <LimitNote gate={gate} what="workspaces" />}
        <form onSubmit={submit}>
          <Field label="Workspace name" error={create.error?.fieldMessage('name')}>
            {(p) => <input {...p} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <ErrorNote error={create.error} title="Could not create the workspace" fields={['name']} />
          {created === undefined ? null : (
            <p className="notice" role="status">
              Created <Link to={`/workspaces/${created.id}`}>{created.name}</Link>; you are its owner.
            </p>
          )}
          <button type="submit" disabled={create.busy || gate !== null}>
            {create.busy ? 'Creating…' : 'Create workspace'}
          </button>
        </form>
      </section>
    </section>
  );
}
