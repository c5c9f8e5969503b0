import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { DemoSiteSuggestion } from '../../components/demo-site';
import { Busy, ErrorNote, Field, PageTitle } from '../../components/ui';
import { useSession } from '../../session/session';
import { type CountGate, countGate, LimitNote, useBilling } from '../billing/gates';
import { authLabel, connectionOf, isMcp, type Site } from './connection';

/** Why the site could not be added, in the user's words (the API's own message follows it). */
const ADD_TITLES: Record<string, string> = {
  INVALID_URL: 'This address cannot be used',
  MANIFEST_NOT_FOUND: 'Nothing at this address speaks agentsite or MCP',
  MANIFEST_INVALID: "The site's manifest or tool list is not valid",
  VAULT_LIMIT_REACHED: 'Your vault is full',
};

export function ConnectionBadge({ site }: { site: Site }) {
  const connection = connectionOf(site);
  return <span className={`badge ${connection.tone}`}>{connection.label}</span>;
}

type Protocol = 'detect' | 'mcp' | 'agentsite';

const PROTOCOL_CHOICES: Array<[Protocol, string, string]> = [
  ['detect', 'Find out', 'An agentsite manifest is looked for first, then an MCP server.'],
  ['mcp', 'An MCP server', 'The address is the server’s endpoint (often ending in /mcp).'],
  ['agentsite', 'An agentsite site', 'The site publishes /.well-known/agentsite.json.'],
];

/** What to add the address as: found out (the default), or said by the user (under a disclosure). */
function ProtocolChoice({ value, onChange }: { value: Protocol; onChange: (p: Protocol) => void }) {
  return (
    <details className="protocol-choice" open={value !== 'detect' || undefined}>
      <summary>Kind of site: {PROTOCOL_CHOICES.find(([p]) => p === value)![1].toLowerCase()}</summary>
      <fieldset className="choices">
        <legend>Add the address as</legend>
        {PROTOCOL_CHOICES.map(([p, label, hint]) => (
          <div className="check" key={p}>
            <input
              id={`protocol-${p}`}
              type="radio"
              name="protocol"
              checked={value === p}
              aria-describedby={`protocol-${p}-hint`}
              onChange={() => onChange(p)}
            />
            <label htmlFor={`protocol-${p}`}>{label}</label>
            <small id={`protocol-${p}-hint`} className="hint">
              {hint}
            </small>
          </div>
        ))}
      </fieldset>
    </details>
  );
}

function AddSiteForm({ onAdded, full }: { onAdded: (site: Site) => void; full: CountGate | null }) {
  const [url, setUrl] = useState('');
  const [protocol, setProtocol] = useState<Protocol>('detect');
  const add = useAction(async () => {
    const body: { url: string; protocol?: 'mcp' | 'agentsite' } =
      protocol === 'detect' ? { url: url.trim() } : { url: url.trim(), protocol };
    const site = await unwrap(api.POST('/api/vault/sites', { body }));
    setUrl('');
    onAdded(site);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void add.run();
  };
  const error = add.error;
  // INVALID_URL names the field `url`: shown on the field, in plain words.
  const urlMessage = error?.fieldMessage('url');
  return (
    // The service checks the address (and says what is wrong beside the field), not the browser.
    <form onSubmit={submit} className="panel" aria-labelledby="add-site-heading" noValidate>
      <h2 id="add-site-heading">Add a site</h2>
      {full === null ? null : (
        <LimitNote
          gate={full}
          what="sites in your vault"
          remedy={<>Remove a site you no longer use, or change plans. </>}
        />
      )}
      <Field
        label="Site address"
        hint="Its https:// address: an agentsite site's, or an MCP server's endpoint. The service finds out which it is."
        error={urlMessage}
      >
        {(p) => (
          <input
            {...p}
            type="url"
            inputMode="url"
            placeholder="https://notes.example.com"
            required
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
        )}
      </Field>
      <ProtocolChoice value={protocol} onChange={setProtocol} />
      {error === undefined ? null : (
        <ErrorNote error={error} title={ADD_TITLES[error.code] ?? 'Could not add the site'} fields={['url']} />
      )}
      {add.busy ? <Busy label="Reading what the site offers…" /> : null}
      <button type="submit" disabled={add.busy || full !== null}>
        Add site
      </button>
    </form>
  );
}

function SiteRow({ site, onChanged }: { site: Site; onChanged: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/api/vault/sites/{id}', { params: { path: { id: site.id } } }));
    await onChanged();
  });
  const refresh = useAction(async () => {
    await unwrap(api.POST('/api/vault/sites/{id}/manifest/refresh', { params: { path: { id: site.id } } }));
    await onChanged();
  });
  return (
    <tr>
      <th scope="row">
        <Link to={`/vault/${site.id}`}>{site.name}</Link>
        {isMcp(site) ? (
          <>
            {' '}
            <span className="badge">MCP server</span>
          </>
        ) : null}
      </th>
      <td>
        <code>{site.url}</code>
      </td>
      <td>{authLabel(site)}</td>
      <td>
        <ConnectionBadge site={site} />
      </td>
      <td>
        <div className="actions">
          {/* The name starts with the visible words (WCAG 2.5.3): "Refresh manifest of <site>". */}
          <button type="button" className="secondary" onClick={() => void refresh.run()} disabled={refresh.busy}>
            {isMcp(site) ? 'List tools again' : 'Refresh manifest'}
            <span className="visually-hidden"> of {site.name}</span>
          </button>
          {confirming ? (
            <>
              <button type="button" className="danger" onClick={() => void remove.run()} disabled={remove.busy}>
                {remove.busy ? 'Removing…' : `Yes, remove ${site.name}`}
              </button>
              <button type="button" className="secondary" onClick={() => setConfirming(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Remove<span className="visually-hidden"> {site.name}</span>
            </button>
          )}
        </div>
        {refresh.busy ? (
          <Busy
            label={isMcp(site) ? `Asking ${site.name} for its tools…` : `Reading the manifest of ${site.name} again…`}
          />
        ) : null}
        {confirming ? (
          <p className="notice" role="status">
            Removing {site.name} destroys its stored credentials.
          </p>
        ) : null}
        <ErrorNote
          error={refresh.error}
          title={isMcp(site) ? 'Could not list the tools again' : 'Could not refresh the manifest'}
        />
        <ErrorNote error={remove.error} title="Could not remove the site" />
      </td>
    </tr>
  );
}

export function VaultPage() {
  const navigate = useNavigate();
  const sites = useLoad(() => unwrap(api.GET('/api/vault/sites', { params: { query: { limit: 200 } } })), []);
  // In your own vault the plan's site limit is known beforehand (a workspace's is its owner's).
  const billing = useBilling();
  const personal = useSession().workspaceId === null;
  const count =
    sites.data === undefined ? undefined : sites.data.items.length + (sites.data.nextCursor === null ? 0 : 1);
  const full = personal ? countGate(billing.data, count, (l) => l.vaultSites) : null;
  return (
    <section>
      <PageTitle>Vault</PageTitle>
      <p>The sites whose tools your chats and agents may use, and the credentials kept for them (encrypted).</p>
      <AddSiteForm full={full} onAdded={(site) => void navigate(`/vault/${site.id}`)} />
      <h2>Your sites</h2>
      <ErrorNote error={sites.error} title="Could not load your sites" />
      {sites.data === undefined ? (
        sites.loading ? (
          <Busy label="Loading your sites…" />
        ) : null
      ) : sites.data.items.length === 0 ? (
        <DemoSiteSuggestion />
      ) : (
        <div className="table-scroll" role="region" aria-label="Sites in your vault" tabIndex={0}>
          <table>
            <caption className="visually-hidden">Sites in your vault</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Address</th>
                <th scope="col">Sign-in</th>
                <th scope="col">Connection</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {sites.data.items.map((site) => (
                <SiteRow key={site.id} site={site} onChanged={sites.reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
