/**
 * The end of an OAuth connection: the site sent the browser to the service's callback, which sent
 * it here with code, state and iss (or the site's error). The signed-in user completes it with their
 * own token; only the user who started the connection can (PERMISSION_DENIED for anyone else).
 */
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { useAction } from '../api/hooks';
import { Busy, ErrorNote, PageTitle } from '../components/ui';

type Handoff = Schemas['OAuthCompleteDto'];
type Completed = Schemas['OAuthCompleteResponseDto'] & { siteName?: string };

/** The callback's values, as the completion body takes them; null when there is nothing to complete. */
function readHandoff(search: string): Handoff | null {
  const query = new URLSearchParams(search);
  const state = query.get('state');
  if (state === null) {
    return query.get('error') === null ? null : { state: '', error: query.get('error')! };
  }
  const handoff: Handoff = { state };
  for (const name of ['code', 'iss', 'error'] as const) {
    const value = query.get(name);
    if (value !== null) {
      handoff[name] = value;
    }
  }
  return handoff;
}

const FAILURES: Record<string, { title: string; advice: string }> = {
  PERMISSION_DENIED: {
    title: 'This connection was started by another account',
    advice:
      'Only the account that started a connection can complete it, so nothing was stored and this approval is void. ' +
      'Sign in as that account and connect the site again, or connect it from your own vault.',
  },
  VALIDATION_ERROR: {
    title: 'This approval has expired or was already used',
    advice: 'Approvals are good for 10 minutes and only once. Start the connection again from the site’s page.',
  },
  TOOL_EXECUTION_ERROR: {
    title: 'The site did not issue the tokens',
    advice: 'The site refused to exchange the approval for tokens. Try connecting again.',
  },
};

export function OAuthCompletePage() {
  // Read once: the address bar loses code and state right after, so a reload cannot send them again.
  const [handoff] = useState(() => readHandoff(window.location.search));
  const [done, setDone] = useState<Completed>();
  const started = useRef(false);
  const complete = useAction(async (body: Handoff) => {
    const answer = await unwrap(api.POST('/api/oauth/complete', { body }));
    // The site's name, for the message; the answer stands without it.
    const site = await unwrap(api.GET('/api/vault/sites/{id}', { params: { path: { id: answer.siteId } } })).catch(
      () => undefined,
    );
    setDone({ ...answer, siteName: site?.name });
  });

  useEffect(() => {
    if (started.current) {
      return;
    }
    started.current = true;
    if (window.location.search !== '') {
      window.history.replaceState(window.history.state, '', window.location.pathname);
    }
    if (handoff !== null && handoff.error === undefined) {
      void complete.run(handoff);
    }
  }, [handoff, complete]);

  if (handoff === null) {
    return (
      <section className="narrow">
        <PageTitle>Connect a site</PageTitle>
        <p>There is no connection to complete here. Connect a site from its page in your vault.</p>
        <p>
          <Link to="/vault">Go to the vault</Link>
        </p>
      </section>
    );
  }
  if (handoff.error !== undefined) {
    return (
      <section className="narrow">
        <PageTitle>The site did not approve the connection</PageTitle>
        <div className="error-note" role="alert">
          The site answered <code>{handoff.error}</code>
          {handoff.error === 'access_denied' ? ': the connection was refused on its consent page.' : '.'} Nothing was
          stored.
        </div>
        <p>
          <Link to="/vault">Back to the vault</Link>
        </p>
      </section>
    );
  }
  if (done !== undefined) {
    const name = done.siteName ?? 'The site';
    return (
      <section className="narrow">
        <PageTitle>{name} is connected</PageTitle>
        <p role="status">
          {name} granted the scopes <strong>{done.scopes.join(', ') || 'none'}</strong>. Its tokens are stored,
          encrypted, in your vault.
        </p>
        <p>
          <Link to={`/vault/${done.siteId}`}>Go to {done.siteName ?? 'the site'}&apos;s page</Link>
        </p>
      </section>
    );
  }
  const failure = complete.error === undefined ? undefined : FAILURES[complete.error.code];
  return (
    <section className="narrow">
      <PageTitle>{complete.error === undefined ? 'Completing the connection' : 'The connection failed'}</PageTitle>
      {complete.error === undefined ? <Busy label="Completing the connection with the site…" /> : null}
      <ErrorNote error={complete.error} title={failure?.title ?? 'Could not complete the connection'} />
      {failure === undefined ? null : <p>{failure.advice}</p>}
      {complete.error === undefined ? null : (
        <p>
          <Link to="/vault">Back to the vault</Link>
        </p>
      )}
    </section>
  );
}
