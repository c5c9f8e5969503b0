import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { Busy, ErrorNote } from '../../components/ui';
import type { Connection, Site } from './connection';

/**
 * Connect an MCP server by OAuth, as MCP's authorization defines it: the server's authorization
 * server says which scopes it offers, so there are no tools to choose (a server that needs a
 * connection lists none yet). The service asks for what the server's challenge or metadata names,
 * plus the scope a refused call asked for (step-up).
 */
export function McpConnect({ site, connection }: { site: Site; connection: Connection }) {
  const connect = useAction(async () => {
    const answer = await unwrap(
      api.POST('/api/vault/sites/{id}/oauth/start', { params: { path: { id: site.id } }, body: {} }),
    );
    window.location.assign(answer.authorizationUrl);
  });
  // The 403's scope names every scope the call needs: the ones not granted yet are what to ask for.
  const asked = (site.credential.requiredScope ?? '').split(/\s+/).filter(Boolean);
  const missing = asked.filter((s) => !connection.scopes.includes(s));
  const stepUp = asked.length === 0 ? null : (missing.length > 0 ? missing : asked).join(', ');
  const connected = connection.state === 'oauth' || connection.state === 'token';
  const label =
    stepUp !== null
      ? `Connect ${site.name} again with ${stepUp}`
      : connected
        ? `Connect ${site.name} again`
        : connection.state === 'reconnect'
          ? `Connect ${site.name} again`
          : `Connect ${site.name}`;
  return (
    <section aria-labelledby="oauth-heading">
      <h3 id="oauth-heading">Connect with OAuth</h3>
      {stepUp === null ? (
        <p className="hint">
          You approve the connection on the sign-in page of {site.name}&apos;s authorization server, then come back
          here.
        </p>
      ) : (
        <p className="notice" role="status">
          {site.name} asked for more access for a call: <strong>{stepUp}</strong>. Connect again to grant it.
        </p>
      )}
      <ErrorNote error={connect.error} title="Could not start the connection" />
      {connect.busy ? <Busy label={`Opening ${site.name}'s sign-in page…`} /> : null}
      <div className="actions">
        <button
          type="button"
          className={connected && stepUp === null ? 'secondary' : undefined}
          onClick={() => void connect.run()}
          disabled={connect.busy}
        >
          {label}
        </button>
      </div>
    </section>
  );
}
