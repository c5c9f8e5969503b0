/** The pieces of the consent page: who asks, the workspace choice with what it allows, an expired request. */
import { useId, useState } from 'react';
import { Link } from 'react-router';
import { type Schemas } from '../../api/client';
import { PageTitle } from '../../components/ui';

export type Consent = Schemas['McpConsentDto'];
export type ConsentWorkspace = Consent['workspaces'][number];

/** The key of a workspace choice (a radio's value): the personal account has no id. */
export const keyOf = (w: ConsentWorkspace): string => w.id ?? 'personal';

/** The host of an https address, or undefined (a registered client's id is no address). */
function httpsHost(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' ? url.host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Who asks: the app's name and logo (its own claims, which a lookalike can copy), then, prominently,
 * where the browser goes after the answer: the redirect host, which the app cannot fake.
 */
export function ClientCard({ client }: { client: Consent['client'] }) {
  const [logoShown, setLogoShown] = useState(true);
  // A client identified by a metadata document (its id is the document's https address): the
  // service fetched the app's description from that host.
  const publishedAt = httpsHost(client.id);
  return (
    <div className="panel client-card">
      <div className="client-name">
        {client.logoUri !== null && logoShown ? (
          <img src={client.logoUri} alt="" width={48} height={48} onError={() => setLogoShown(false)} />
        ) : null}
        <p>
          <strong>{client.name}</strong> asks to use your sites and agents.
          {publishedAt === undefined ? null : (
            <>
              {' '}
              <span className="hint">It describes itself at {publishedAt}.</span>
            </>
          )}
        </p>
      </div>
      <p className="redirect-host">
        After you answer, your browser goes to <strong>{client.redirectHost}</strong>
      </p>
      <p className="hint">
        Approve only if you started this from {client.name} just now and this is the address you expect: another app can
        copy a name and a logo, not this address.
      </p>
    </div>
  );
}

const ABLE: Record<'viewer' | 'other', (where: string) => string[]> = {
  viewer: (where) => [
    `See the tools of the sites connected in ${where}, and its agents`,
    `Read the runs of ${where}'s agents`,
    'It cannot call tools or start agents there: your role is viewer',
  ],
  other: (where) => [
    `See the tools of the sites connected in ${where} and call them, with the credentials kept for them`,
    `Start ${where}'s agents and read their runs`,
  ],
};

function placeName(w: ConsentWorkspace): string {
  return w.id === null ? 'your own account' : w.name;
}

/** The workspace the app will act in (personal or a team workspace), and what it may do there. */
export function WorkspaceChoice({
  workspaces,
  selected,
  appName,
  onChoose,
}: {
  workspaces: ConsentWorkspace[];
  selected: ConsentWorkspace;
  appName: string;
  onChoose: (key: string) => void;
}) {
  const id = useId();
  const abilities = ABLE[selected.role === 'viewer' ? 'viewer' : 'other'](placeName(selected));
  return (
    <>
      <fieldset className="choices">
        <legend>Where {appName} acts</legend>
        {workspaces.map((w) => {
          const key = keyOf(w);
          return (
            <div className="check" key={key}>
              <input
                id={`${id}-${key}`}
                type="radio"
                name="workspace"
                value={key}
                checked={keyOf(selected) === key}
                aria-describedby={`${id}-${key}-hint`}
                onChange={() => onChoose(key)}
              />
              <label htmlFor={`${id}-${key}`}>{w.id === null ? 'My account' : w.name}</label>
              <small id={`${id}-${key}-hint`} className="hint">
                {w.id === null ? 'your own sites and agents' : `team workspace, your role: ${w.role}`}
              </small>
            </div>
          );
        })}
      </fieldset>
      <h2 className="consent-abilities">
        What {appName} will be able to do in {placeName(selected)}
      </h2>
      <ul>
        {abilities.map((line) => (
          <li key={line}>{line}.</li>
        ))}
      </ul>
    </>
  );
}

/** An unknown, expired or already answered request: what happened and what to do, in words. */
export function ExpiredRequest() {
  return (
    <section className="narrow">
      <PageTitle>This connection request has ended</PageTitle>
      <p>
        The request to connect an app has expired, was already answered, or does not exist. Nothing was connected by it.
      </p>
      <p>Go back to the app (your assistant or editor) and connect again: it opens a new request here.</p>
      <p>
        <Link to="/account#connected-apps">See your connected apps</Link>
      </p>
    </section>
  );
}
