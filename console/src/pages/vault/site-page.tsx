import { Link, useParams, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, PageTitle } from '../../components/ui';
import { authLabel, connectionOf } from './connection';
import { ConnectionPanel } from './connection-panel';
import { ShareSite } from './share-site';
import { ToolTry } from './tool-try';

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
  const connection = connectionOf(s);
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
        <dt>Manifest</dt>
        <dd>
          version {s.version}, read {formatDate(s.manifestFetchedAt)}{' '}
          <button type="button" className="secondary" onClick={() => void refresh.run()} disabled={refresh.busy}>
            Refresh manifest
          </button>
          {refresh.busy ? <Busy label="Reading the manifest again…" /> : null}
        </dd>
      </dl>
      <ErrorNote error={refresh.error} title="Could not refresh the manifest" />
      <ErrorNote error={site.error} title="Could not reload this site" />

      <ConnectionPanel site={s} connection={connection} onChanged={site.reload} />
      <ShareSite site={s} />

      <h2>Tools</h2>
      {connection.usable ? null : (
        <p className="hint">
          The tools can be tried once {s.name} is connected (<a href="#connection">Connection</a>).
        </p>
      )}
      <div className="table-scroll" role="region" aria-label={`Tools of ${s.name}`} tabIndex={0}>
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
                  {connection.state === 'oauth' && !connection.scopes.includes(tool.scope) ? (
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
      </div>
      {trying === undefined ? null : (
        <ToolTry key={trying.name} site={s} tool={trying} connection={connection} onFailed={site.reload} />
      )}
    </section>
  );
}
