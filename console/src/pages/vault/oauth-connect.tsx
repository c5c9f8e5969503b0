import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { Busy, ErrorNote } from '../../components/ui';
import { type Connection, scopesFor, type Site } from './connection';

/** Sends the browser to the site's consent page; the site sends it back to /oauth/complete. */
async function startConnection(site: Site, tools: string[]): Promise<void> {
  const answer = await unwrap(
    api.POST('/api/vault/sites/{id}/oauth/start', { params: { path: { id: site.id } }, body: { tools } }),
  );
  window.location.assign(answer.authorizationUrl);
}

/**
 * Connect by OAuth, choosing the tools: the connection asks only for the scopes they need. A
 * connection the site refused to renew, or whose access expired without a way to renew it, gets one
 * button that asks again for what was granted before.
 * The connection's state is shown once, by the connection panel around this form.
 */
export function OAuthConnect({ site, connection }: { site: Site; connection: Connection }) {
  const granted: string[] = connection.scopes;
  const [chosen, setChosen] = useState<Set<string>>(() => {
    // Renewing keeps what was asked before; a first connection starts with every tool.
    const before = site.tools.filter((t) => granted.includes(t.scope));
    return new Set((before.length > 0 ? before : site.tools).map((t) => t.name));
  });
  const connect = useAction((tools: string[]) => startConnection(site, tools));
  const chosenTools = site.tools.filter((t) => chosen.has(t.name));
  const needed = scopesFor(chosenTools);
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) {
      next.add(name);
    } else {
      next.delete(name);
    }
    setChosen(next);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void connect.run(chosenTools.map((t) => t.name));
  };

  return (
    <section aria-labelledby="oauth-heading">
      <h3 id="oauth-heading">Connect with OAuth</h3>
      {connection.state === 'reconnect' || connection.state === 'expired' ? (
        <div className="notice">
          <button
            type="button"
            onClick={() => void connect.run(chosenTools.map((t) => t.name))}
            disabled={connect.busy || chosenTools.length === 0}
          >
            Connect {site.name} again
          </button>
        </div>
      ) : (
        <p className="hint">Choose the tools to allow, then approve the connection on {site.name}&apos;s own page.</p>
      )}
      <form onSubmit={submit}>
        <fieldset>
          <legend>Tools this connection is for</legend>
          {site.tools.map((tool) => (
            <div className="check" key={tool.name}>
              <input
                id={`connect-tool-${tool.name}`}
                type="checkbox"
                checked={chosen.has(tool.name)}
                onChange={(e) => toggle(tool.name, e.target.checked)}
              />
              <label htmlFor={`connect-tool-${tool.name}`}>
                <code>{tool.name}</code> <span className="hint">(needs {tool.scope})</span>
              </label>
            </div>
          ))}
        </fieldset>
        <p role="status" aria-live="polite">
          {needed.length === 0 ? (
            'Choose at least one tool.'
          ) : (
            <>
              Scopes asked for: <strong>{needed.join(', ')}</strong>
            </>
          )}
        </p>
        <ErrorNote error={connect.error} title="Could not start the connection" />
        {connect.busy ? <Busy label={`Opening ${site.name}'s consent page…`} /> : null}
        <div className="actions">
          <button type="submit" disabled={connect.busy || chosenTools.length === 0}>
            {connection.state === 'none' ? `Connect ${site.name}` : `Connect ${site.name} with these tools`}
          </button>
        </div>
      </form>
    </section>
  );
}
