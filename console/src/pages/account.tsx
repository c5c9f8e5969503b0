import { useNavigate } from 'react-router';
import { useAction } from '../api/hooks';
import { ErrorNote, formatCredits, formatDate, PageTitle } from '../components/ui';
import { useSession } from '../session/session';
import { ConnectedApps } from './account/connected-apps';

export function AccountPage() {
  const { me, signOut } = useSession();
  const navigate = useNavigate();
  const out = useAction(async (everywhere: boolean) => {
    await signOut(everywhere);
    await navigate('/signin', { replace: true });
  });
  if (!me) {
    return null;
  }
  return (
    <section>
      <PageTitle>Your account</PageTitle>
      <dl className="facts">
        <dt>Email</dt>
        <dd>{me.email}</dd>
        <dt>Name</dt>
        <dd>{me.name ?? '—'}</dd>
        <dt>Role</dt>
        <dd>{me.role}</dd>
        <dt>Tier</dt>
        <dd>{me.tier}</dd>
        <dt>Balance</dt>
        <dd>{formatCredits(me.credits)}</dd>
        <dt>Terms accepted</dt>
        <dd>{formatDate(me.acceptedTermsAt)}</dd>
      </dl>
      <ErrorNote error={out.error} title="Could not sign out" />
      <div className="actions">
        <button type="button" onClick={() => void out.run(false)} disabled={out.busy}>
          Sign out
        </button>
        <button type="button" className="danger" onClick={() => void out.run(true)} disabled={out.busy}>
          Sign out everywhere
        </button>
      </div>
      <p className="hint">“Sign out everywhere” ends every session of this account, on every device.</p>
      <ConnectedApps />
    </section>
  );
}
