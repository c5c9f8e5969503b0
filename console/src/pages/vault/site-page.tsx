import { Link, useParams, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, PageTitle } from '../../components/ui';
import { authLabel, connectionOf, isMcp, protocolLabel, type Site } from './connection';
import { ConnectionPanel } from './connection-panel';
import { ShareSite } from './share-site';
import { ToolsTable } from './tools-table';
import { ToolTry } from './tool-try';

/**
 * One site (an agentsite site or an MCP server): its tools and the scopes each needs, its credential,
 * and a try-out form per tool.
 */
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
  const s: Site = site.data;
  const trying = s.tools.find((t) => t.name === params.get('tool'));
  const connection = connectionOf(s);
  const mcp = isMcp(s);
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
        <dt>Kind</dt>
        <dd>{protocolLabel(s)}</dd>
        <dt>Sign-in</dt>
        <dd>{authLabel(s)}</dd>
        <dt>{mcp ? 'Tools' : 'Manifest'}</dt>
        <dd>
          {mcp
            ? `listed ${formatDate(s.manifestFetchedAt)}`
            : `version ${s.version}, read ${formatDate(s.manifestFetchedAt)}`}{' '}
          <button type="button" className="secondary" onClick={() => void refresh.run()} disabled={refresh.busy}>
            {mcp ? 'List tools again' : 'Refresh manifest'}
          </button>
          {refresh.busy ? (
            <Busy label={mcp ? `Asking ${s.name} for its tools…` : 'Reading the manifest again…'} />
          ) : null}
        </dd>
      </dl>
      <ErrorNote
        error={refresh.error}
        title={mcp ? 'Could not list the tools again' : 'Could not refresh the manifest'}
      />
      <ErrorNote error={site.error} title="Could not reload this site" />

      <ConnectionPanel site={s} connection={connection} onChanged={site.reload} />
      <ShareSite site={s} />

      <h2>Tools</h2>
      {s.tools.length === 0 ? (
        <p className="hint">
          {connection.state === 'needs_connection'
            ? `${s.name} lists its tools once it is connected (`
            : `${s.name} offers no tools at the moment (`}
          <a href="#connection">Connection</a>).
        </p>
      ) : (
        <>
          {connection.usable ? null : (
            <p className="hint">
              The tools can be tried once {s.name} is connected (<a href="#connection">Connection</a>).
            </p>
          )}
          <ToolsTable
            site={s}
            connection={connection}
            trying={trying?.name}
            onTry={(tool) => setParams({ tool }, { replace: true })}
          />
        </>
      )}
      {trying === undefined ? null : (
        <ToolTry key={trying.name} site={s} tool={trying} connection={connection} onFailed={site.reload} />
      )}
    </section>
  );
}
