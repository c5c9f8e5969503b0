/**
 * The account page's "Connected apps": the MCP clients (assistants, editors) the user approved on
 * the consent page, in every workspace, each with Revoke (asked twice); and how to connect one.
 */
import { useEffect, useRef, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate } from '../../components/ui';
import { CopyField } from '../agents/parts';

type ConnectedApp = Schemas['ConnectedAppDto'];

/** The address an MCP client is given: this service's MCP endpoint. */
export function mcpAddress(): string {
  return `${window.location.origin}/mcp`;
}

function AppRow({ app, onRevoked }: { app: ConnectedApp; onRevoked: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const revoke = useAction(async () => {
    await unwrap(api.DELETE('/api/connected-apps/{id}', { params: { path: { id: app.id } } }));
    await onRevoked();
  });
  return (
    <tr>
      <th scope="row">{app.clientName}</th>
      <td>
        <code>{app.redirectHost}</code>
      </td>
      <td>{app.workspace ? app.workspace.name : 'My account'}</td>
      <td>{formatDate(app.createdAt)}</td>
      <td>{app.lastUsedAt === null ? 'Not yet' : formatDate(app.lastUsedAt)}</td>
      <td>
        <div className="actions">
          {confirming ? (
            <>
              <button type="button" className="danger" onClick={() => void revoke.run()} disabled={revoke.busy}>
                {revoke.busy ? 'Disconnecting…' : `Yes, disconnect ${app.clientName}`}
              </button>
              <button type="button" className="secondary" onClick={() => setConfirming(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Revoke<span className="visually-hidden"> {app.clientName}</span>
            </button>
          )}
        </div>
        {confirming ? (
          <p className="notice" role="status">
            {app.clientName} loses its access at once; to use it again, connect it again.
          </p>
        ) : null}
        <ErrorNote error={revoke.error} title="Could not disconnect the app" />
      </td>
    </tr>
  );
}

export function ConnectedApps() {
  const apps = useLoad(() => unwrap(api.GET('/api/connected-apps')), []);
  const items = apps.data?.apps ?? [];
  // Linked to from the consent page (/account#connected-apps): shown once the list is there.
  const section = useRef<HTMLElement>(null);
  const loaded = apps.data !== undefined;
  useEffect(() => {
    if (loaded && window.location.hash === '#connected-apps') {
      section.current?.scrollIntoView();
    }
  }, [loaded]);
  return (
    <section id="connected-apps" ref={section} aria-labelledby="connected-apps-heading" className="panel">
      <h2 id="connected-apps-heading">Connected apps</h2>
      <p className="hint">
        Assistants and editors you allowed to use your sites and agents, each in the workspace you chose for it.
      </p>
      <ErrorNote error={apps.error} title="Could not load your connected apps" />
      {apps.loading && apps.data === undefined ? <Busy label="Loading your connected apps…" /> : null}
      {apps.data !== undefined && items.length === 0 ? <p>No app is connected to your account.</p> : null}
      {items.length > 0 ? (
        <table aria-label="Connected apps">
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">Goes back to</th>
              <th scope="col">Acts in</th>
              <th scope="col">Connected</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((app) => (
              <AppRow key={app.id} app={app} onRevoked={apps.reload} />
            ))}
          </tbody>
        </table>
      ) : null}
      <h3>Connect an app</h3>
      <p>
        In an assistant or editor that speaks MCP, add a remote MCP server with this address. It opens this console in
        your browser to ask for your approval; nothing else to copy.
      </p>
      <CopyField label="MCP server address" value={mcpAddress()} />
    </section>
  );
}
