import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote } from '../../components/ui';
import { BearerToken } from './bearer-token';
import { type Connection, isMcp, type Site } from './connection';
import { McpConnect } from './mcp-connect';
import { OAuthConnect } from './oauth-connect';

/**
 * The site's connection, in one place: its state (said once, from connectionOf), the ways to connect
 * (OAuth for an OAuth site, and a pasted API token for every site), and removing what is stored.
 */
export function ConnectionPanel({
  site,
  connection,
  onChanged,
}: {
  site: Site;
  connection: Connection;
  onChanged: () => Promise<void>;
}) {
  const credential = site.credential;
  return (
    <section className="panel" id="connection" aria-labelledby="connection-heading" tabIndex={-1}>
      <h2 id="connection-heading">Connection</h2>
      <p role="status">
        <span className={`badge ${connection.tone}`}>{connection.label}</span> {connection.detail}
      </p>
      {credential.kind === 'bearer' && credential.tokenHint !== undefined ? (
        <p>
          Stored token: <code>{credential.tokenHint}</code>
        </p>
      ) : null}
      {site.auth.type !== 'oauth2' ? null : isMcp(site) ? (
        <McpConnect site={site} connection={connection} />
      ) : (
        <OAuthConnect key={`${credential.kind}-${credential.status}`} site={site} connection={connection} />
      )}
      <BearerToken site={site} onChanged={onChanged} />
      {credential.kind === null ? null : <RemoveCredential site={site} onRemoved={onChanged} />}
    </section>
  );
}

/** Removes the stored token or OAuth connection, after asking. */
function RemoveCredential({ site, onRemoved }: { site: Site; onRemoved: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/api/vault/sites/{id}/token', { params: { path: { id: site.id } } }));
    setAsking(false);
    await onRemoved();
  });
  const oauth = site.credential.kind === 'oauth2';
  return (
    <div className="actions">
      {asking ? (
        <>
          <button type="button" className="danger" onClick={() => void remove.run()} disabled={remove.busy}>
            {oauth ? 'Yes, disconnect' : 'Yes, remove the token'}
          </button>
          <button type="button" className="secondary" onClick={() => setAsking(false)}>
            {oauth ? 'Stay connected' : 'Keep it'}
          </button>
        </>
      ) : (
        <button type="button" className="danger" onClick={() => setAsking(true)}>
          {oauth ? 'Disconnect' : 'Remove token'}
        </button>
      )}
      <ErrorNote error={remove.error} title={oauth ? 'Could not disconnect' : 'Could not remove the token'} />
    </div>
  );
}
