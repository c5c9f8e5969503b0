import { Link, useParams, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, PageTitle } from '../../components/ui';
import { BearerToken } from './bearer-token';
import { authLabel, connectionOf } from './connection';
import { OAuthConnect } from './oauth-connect';
import { ToolTry } from './tool-try';
import { ConnectionBadge } from './vault-list';

/** One site: its tools and the scopes each needs, its credential, and a try-out form per tool. */
export function SitePage() {
  const { siteId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const site = useLoad(() => unwrap(api.GET('/api/vault/sites/{id}', { params: { path: { id: siteId } } })), [siteId]);
  const refresh = useAction(async () => {
    await unwrap(api.POST('/api/vault/sites/{id}/manifest/refresh', { params: { path: { id: siteId } } }));
    await site.reload();
  });
  if (site.data === undefined) {
    return (
      <section>
        <PageTitle>Site</PageTitle>
        <ErrorNote error={site.error} title="Could not load this site" />
        {site.loading ? <Busy label="Loading the site…" /> : null}
        <p>
          <Link to="/vault">Back to the vault</Link>
        </p>
      </section>
    );
  }
  const s = site.data;
  const trying = s.tools.find((t) => t.name === params.get('tool'));
  const usable = ['connected', 'token'].includes(connectionOf(s).state);
  return (
    <section>
      <p>
        <Link to="/vault">← Vault</Link>
      </p>
      <PageTitle>{s.name}</PageTitle>
      <p>{s.description}</p>
      <dl className="facts">
        <dt>Address</dt>
        <dd>
          <code>{s.url}</code>
        </dd>
        <dt>Sign-in</dt>
        <dd>{authLabel(s)}</dd>
        <dt>Connection</dt>
        <dd>
          <ConnectionBadge site={s} />
        </dd>
        <dt>Manifest</dt>
        <dd>
          version {s.version}, read {formatDate(s.manifestFetchedAt)}{' '}
          <button type="button" className="secondary" onClick={() => void refresh.run()} disabled={refresh.busy}>
            {refresh.busy ? 'Refreshing…' : 'Refresh manifest'}
          </button>
        </dd>
      </dl>
      <ErrorNote error={refresh.error} title="Could not refresh the manifest" />
      <ErrorNote error={site.error} title="Could not reload this site" />

      {s.auth.type === 'oauth2' ? (
        <OAuthConnect key={`${s.credential.kind}-${s.credential.status}`} site={s} onDisconnected={site.reload} />
      ) : (
        <BearerToken site={s} onChanged={site.reload} />
      )}

      <h2>Tools</h2>
      {usable ? null : <p className="hint">Connect the site (or store a token) before calling its tools.</p>}
      <table>
        <caption className="visually-hidden">Tools of {s.name}</caption>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">What it does</th>
            <th scope="col">Scope needed</th>
            <th scope="col">Try it</th>
          </tr>
        </thead>
        <tbody>
          {s.tools.map((tool) => (
            <tr key={tool.name}>
              <th scope="row">
                <code>{tool.name}</code>
              </th>
              <td>{tool.description}</td>
              <td>
                <span className="badge">{tool.scope}</span>
                {s.credential.kind === 'oauth2' && !(s.credential.scopes ?? []).includes(tool.scope) ? (
                  <span className="badge warn">not granted</span>
                ) : null}
              </td>
              <td>
                <button
                  type="button"
                  className="secondary"
                  aria-pressed={trying?.name === tool.name}
                  onClick={() => setParams({ tool: tool.name }, { replace: true })}
                >
                  Try {tool.name}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {trying === undefined ? null : <ToolTry key={trying.name} site={s} tool={trying} />}
    </section>
  );
}
