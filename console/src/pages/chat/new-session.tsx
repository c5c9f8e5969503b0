/** Starting a conversation: the sites of the vault to use, and which of their tools (all by default). */
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field } from '../../components/ui';

type Site = Schemas['SiteResponseDto'];

/** Per site: null when not used, else the chosen tool names. */
type Choice = Record<string, string[] | null>;

function SiteChoice({
  site,
  tools,
  onChange,
}: {
  site: Site;
  tools: string[] | null;
  onChange: (tools: string[] | null) => void;
}) {
  const used = tools !== null;
  const toggleTool = (name: string, on: boolean) =>
    onChange(on ? [...(tools ?? []), name] : (tools ?? []).filter((t) => t !== name));
  return (
    <fieldset className="site-choice">
      <legend>{site.name}</legend>
      <label className="check">
        <input
          type="checkbox"
          checked={used}
          onChange={(e) => onChange(e.target.checked ? site.tools.map((t) => t.name) : null)}
        />
        Use {site.name}
      </label>
      {site.credential.kind === null ? (
        <p className="notice">
          No credential stored: its tools will fail until you <Link to={`/vault/${site.id}`}>connect it</Link>.
        </p>
      ) : null}
      {site.credential.status === 'reauth_required' ? (
        <p className="notice">
          The site refused its credential: <Link to={`/vault/${site.id}`}>connect it again</Link>.
        </p>
      ) : null}
      {used ? (
        <fieldset className="tool-choice">
          <legend>Tools of {site.name}</legend>
          {site.tools.map((tool) => (
            <label key={tool.name} className="check">
              <input
                type="checkbox"
                checked={tools.includes(tool.name)}
                onChange={(e) => toggleTool(tool.name, e.target.checked)}
              />
              <span>
                <code>{tool.name}</code> <span className="badge">{tool.scope}</span>{' '}
                <span className="muted">{tool.description}</span>
              </span>
            </label>
          ))}
        </fieldset>
      ) : null}
    </fieldset>
  );
}

export function NewSession({ onCreated }: { onCreated: () => void }) {
  const navigate = useNavigate();
  const sites = useLoad(() => unwrap(api.GET('/api/vault/sites', { params: { query: { limit: 200 } } })), []);
  const [choice, setChoice] = useState<Choice>({});
  const [title, setTitle] = useState('');
  const start = useAction(async () => {
    const all = sites.data?.items ?? [];
    const chosen = all
      .filter((site) => (choice[site.id] ?? null) !== null)
      .map((site) => {
        const tools = choice[site.id] ?? [];
        // Every tool chosen: leave `tools` out, so tools the site adds later are usable too.
        return tools.length === site.tools.length ? { siteId: site.id } : { siteId: site.id, tools };
      });
    const created = await unwrap(
      api.POST('/api/sessions', { body: { sites: chosen, ...(title.trim() ? { title: title.trim() } : {}) } }),
    );
    onCreated();
    await navigate(`/chat/${created.token}`);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void start.run();
  };
  if (sites.error !== undefined) {
    return <ErrorNote error={sites.error} title="Your sites could not be read" />;
  }
  if (sites.data === undefined) {
    return <Busy label="Loading your sites…" />;
  }
  if (sites.data.items.length === 0) {
    return (
      <p className="notice">
        Your vault has no site yet: <Link to="/vault">add one in the vault</Link> to chat with its tools.
      </p>
    );
  }
  const none = Object.values(choice).every((tools) => tools === null);
  return (
    <form onSubmit={submit} aria-labelledby="new-chat-heading">
      <h2 id="new-chat-heading">New conversation</h2>
      <Field label="Title (optional)" error={start.error?.fieldMessage('title')}>
        {(p) => <input {...p} value={title} maxLength={200} onChange={(e) => setTitle(e.target.value)} />}
      </Field>
      {sites.data.items.map((site) => (
        <SiteChoice
          key={site.id}
          site={site}
          tools={choice[site.id] ?? null}
          onChange={(tools) => setChoice((c) => ({ ...c, [site.id]: tools }))}
        />
      ))}
      <ErrorNote error={start.error} title="The conversation was not started" fields={['title']} />
      <div className="actions">
        <button type="submit" disabled={start.busy || none}>
          Start conversation
        </button>
        {none ? <span className="muted">Choose at least one site.</span> : null}
      </div>
      {start.busy ? <Busy label="Starting…" /> : null}
    </form>
  );
}
