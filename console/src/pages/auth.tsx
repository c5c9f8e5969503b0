import { type FormEvent, useState } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAction } from '../api/hooks';
import { ErrorNote, Field, PageTitle } from '../components/ui';
import { useSession } from '../session/session';
import { Welcome } from './welcome';

/** Where to go after signing in: only a path of this console (never another site). */
function nextPath(params: URLSearchParams): string {
  const next = params.get('next');
  return next !== null && next.startsWith('/') && !next.startsWith('//') ? next : '/vault';
}

export function SignInPage() {
  const { me, signIn, endedBecause } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useAction(async () => {
    const answer = await unwrap(api.POST('/api/auth/console/login', { body: { email, password } }));
    signIn(answer.user);
    await navigate(nextPath(params), { replace: true });
  });
  if (me) {
    return <Navigate to={nextPath(params)} replace />;
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void login.run();
  };
  return (
    <div className="auth-page">
      <PageTitle>Sign in</PageTitle>
      <p className="lead">
        agentsite connects an AI chat and your own agents to the tools of the sites you use.{' '}
        <Link to={`/signup?${params.toString()}`}>Create an account</Link> to start, or sign in.
      </p>
      <div className="auth-columns">
        <section className="narrow" aria-label="Sign in">
          {endedBecause === null ? null : (
            <p className="notice" role="status">
              You were signed out: {endedBecause}
            </p>
          )}
          <form onSubmit={submit} aria-describedby="signin-error">
            <Field label="Email" error={login.error?.fieldMessage('email')}>
              {(p) => (
                <input
                  {...p}
                  type="email"
                  autoComplete="email"
                  required
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              )}
            </Field>
            <Field label="Password" error={login.error?.fieldMessage('password')}>
              {(p) => (
                <input
                  {...p}
                  type="password"
                  autoComplete="current-password"
                  required
                  value={password}
                  onChange={(e) => setPassword(e.target.value)}
                />
              )}
            </Field>
            <div id="signin-error">
              <ErrorNote error={login.error} title="Could not sign in" fields={['email', 'password']} />
            </div>
            <button type="submit" disabled={login.busy}>
              {login.busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
          <p>
            New here? <Link to={`/signup?${params.toString()}`}>Create an account</Link>
          </p>
        </section>
        <Welcome />
      </div>
    </div>
  );
}

export function SignUpPage() {
  const { me, signIn } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const register = useAction(async () => {
    const answer = await unwrap(
      api.POST('/api/auth/console/register', {
        body: name.trim() === '' ? { email, password } : { email, password, name },
      }),
    );
    signIn(answer.user);
    await navigate(`/terms?next=${encodeURIComponent(nextPath(params))}`, { replace: true });
  });
  if (me) {
    return <Navigate to={nextPath(params)} replace />;
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void register.run();
  };
  return (
    <div className="auth-page">
      <PageTitle>Create an account</PageTitle>
      <div className="auth-columns">
        <section className="narrow" aria-label="Your new account">
          <form onSubmit={submit}>
            <Field label="Email" error={register.error?.fieldMessage('email')}>
              {(p) => (
                <input
                  {...p}
                  type="email"
                  autoComplete="email"
                  required
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              )}
            </Field>
            <Field label="Name (optional)" error={register.error?.fieldMessage('name')}>
              {(p) => <input {...p} autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />}
            </Field>
            <Field label="Password" hint="At least 12 characters." error={register.error?.fieldMessage('password')}>
              {(p) => (
                <input
                  {...p}
                  type="password"
                  autoComplete="new-password"
                  required
                  minLength={12}
                  value={password}
                  onChange={(e) => setPassword(e.target.value)}
                />
              )}
            </Field>
            <ErrorNote
              error={register.error}
              title="Could not create the account"
              fields={['email', 'name', 'password']}
            />
            <button type="submit" disabled={register.busy}>
              {register.busy ? 'Creating…' : 'Create account'}
            </button>
          </form>
          <p>
            Have an account? <Link to={`/signin?${params.toString()}`}>Sign in</Link>
          </p>
        </section>
        <Welcome />
      </div>
    </div>
  );
}

/** The terms step: the service refuses gated work (TERMS_NOT_ACCEPTED) until the user accepts. */
export const TERMS_VERSION = '2026-01';

export function TermsPage() {
  const { me, refreshMe, refreshWorkspaces } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [agreed, setAgreed] = useState(false);
  const accept = useAction(async () => {
    await unwrap(api.POST('/api/auth/accept-terms', { body: { version: TERMS_VERSION } }));
    await refreshMe();
    void refreshWorkspaces();
    await navigate(nextPath(params), { replace: true });
  });
  if (me === null) {
    return <Navigate to="/signin" replace />;
  }
  if (me?.acceptedTermsAt) {
    return <Navigate to={nextPath(params)} replace />;
  }
  return (
    <section className="narrow">
      <PageTitle>Terms of service</PageTitle>
      <div className="terms" tabIndex={0} aria-label="Terms of service text">
        <p>
          agentsite stores credentials for the sites you connect, encrypted, and calls those sites' tools on your behalf
          when you chat or when your agents run. You are responsible for the sites you connect and for what your agents
          do with them. Runs use credits; the model's and the sites' answers are kept with your runs and conversations,
          visible only to you and the members of your workspaces.
        </p>
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void accept.run();
        }}
      >
        <div className="check">
          <input id="terms-agree" type="checkbox" checked={agreed} onChange={(e) => setAgreed(e.target.checked)} />
          <label htmlFor="terms-agree">I accept the terms of service (version {TERMS_VERSION})</label>
        </div>
        <ErrorNote error={accept.error} title="Could not record your acceptance" />
        <button type="submit" disabled={!agreed || accept.busy}>
          {accept.busy ? 'Saving…' : 'Continue'}
        </button>
      </form>
    </section>
  );
}
