/**
 * The consent page of agentsite's own authorization server (/connect/:uid): an MCP client (a
 * desktop assistant, an editor) asks to act for the signed-in user. The page shows who asks and
 * where the browser goes afterwards (the redirect host: the one thing a lookalike cannot copy),
 * what the app will be able to do, and the workspace to act in; Approve or Deny sends the browser
 * on to the address the service answers (which ends at the app's redirect URI).
 */
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, PageTitle } from '../../components/ui';
import { useSession } from '../../session/session';
import { ClientCard, ExpiredRequest, keyOf, WorkspaceChoice } from './consent-parts';

/** Only an http(s) address is followed: the service's answer, never a script URL. */
function goTo(address: string): void {
  const url = new URL(address, window.location.href);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error('not a web address');
  }
  window.location.assign(url.href);
}

export function ConsentPage() {
  const { uid = '' } = useParams();
  const { workspaceId } = useSession();
  const request = useLoad(() => unwrap(api.GET('/api/mcp-consent/{uid}', { params: { path: { uid } } })), [uid]);
  const [chosen, setChosen] = useState<string>();
  const [leaving, setLeaving] = useState<'approve' | 'deny'>();
  const answer = useAction(async (approve: boolean, workspace: string | null) => {
    const { redirectTo } = await unwrap(
      api.POST('/api/mcp-consent/{uid}', { params: { path: { uid } }, body: { approve, workspaceId: workspace } }),
    );
    setLeaving(approve ? 'approve' : 'deny');
    goTo(redirectTo);
  });

  const consent = request.data;
  if (request.error?.code === 'SESSION_NOT_FOUND' || answer.error?.code === 'SESSION_NOT_FOUND') {
    return <ExpiredRequest />;
  }
  if (consent === undefined) {
    return (
      <section className="narrow">
        <PageTitle>Connect an app</PageTitle>
        {request.error === undefined ? <Busy label="Loading the request…" /> : null}
        <ErrorNote error={request.error} title="Could not load the request" />
        {request.error === undefined ? null : (
          <p>
            <Link to="/vault">Go to your vault</Link>
          </p>
        )}
      </section>
    );
  }

  // The workspace the console acts in, when the app may act there; else the first offered (personal).
  const offered = consent.workspaces;
  const fallback = offered.find((w) => w.id === workspaceId) ?? offered[0];
  const selected = offered.find((w) => keyOf(w) === chosen) ?? fallback;
  const name = consent.client.name;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (selected !== undefined) {
      void answer.run(true, selected.id);
    }
  };
  if (leaving !== undefined) {
    return (
      <section className="narrow">
        <PageTitle>{leaving === 'approve' ? `${name} is connected` : `${name} was not connected`}</PageTitle>
        <Busy label={`Taking you back to ${consent.client.redirectHost}…`} />
      </section>
    );
  }
  return (
    <section className="narrow consent">
      <PageTitle>Connect {name} to your account?</PageTitle>
      <ClientCard client={consent.client} />
      <form onSubmit={submit}>
        {selected === undefined ? (
          <p className="notice">There is no workspace this app could act in.</p>
        ) : (
          <WorkspaceChoice workspaces={offered} selected={selected} appName={name} onChoose={setChosen} />
        )}
        <p className="hint">
          {name} never sees your password or the credentials kept in your vault. You can disconnect it at any time under{' '}
          <Link to="/account#connected-apps">Your account, Connected apps</Link>.
        </p>
        <ErrorNote error={answer.error} title="Could not send your answer" />
        <div className="actions">
          <button type="submit" disabled={answer.busy || selected === undefined}>
            Approve
          </button>
          <button
            type="button"
            className="secondary"
            disabled={answer.busy}
            onClick={() => void answer.run(false, null)}
          >
            Deny
          </button>
        </div>
        {answer.busy ? <Busy label="Sending your answer…" /> : null}
      </form>
    </section>
  );
}
