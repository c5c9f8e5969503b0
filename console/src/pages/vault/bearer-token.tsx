import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field, formatDate } from '../../components/ui';
import { connectionOf, type Site } from './connection';

/** A datetime-local value (the user's time) as the ISO time the API takes; undefined when empty. */
function isoOf(local: string): string | undefined {
  if (local.trim() === '') {
    return undefined;
  }
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/**
 * Store, replace or remove the site's API token. The token is sent once and never shown again:
 * only its hint and expiry come back.
 */
export function BearerToken({ site, onChanged }: { site: Site; onChanged: () => Promise<void> }) {
  const stored = site.credential.kind !== null;
  const connection = connectionOf(site);
  const [token, setToken] = useState('');
  const [expires, setExpires] = useState('');
  const [removing, setRemoving] = useState(false);
  const body = () => {
    const expiresAt = isoOf(expires);
    return expiresAt === undefined ? { token } : { token, expiresAt };
  };
  const saved = async () => {
    setToken('');
    setExpires('');
    await onChanged();
  };
  const store = useAction(async () => {
    await unwrap(api.POST('/api/vault/sites/{id}/token', { params: { path: { id: site.id } }, body: body() }));
    await saved();
  });
  const replace = useAction(async () => {
    store.clearError();
    await unwrap(api.PATCH('/api/vault/sites/{id}/token', { params: { path: { id: site.id } }, body: body() }));
    await saved();
  });
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/api/vault/sites/{id}/token', { params: { path: { id: site.id } } }));
    setRemoving(false);
    await onChanged();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void (stored ? replace.run() : store.run());
  };
  const error = store.error ?? replace.error;

  return (
    <section className="panel" aria-labelledby="token-heading">
      <h2 id="token-heading">API token</h2>
      {stored ? (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <span className={`badge ${connection.tone}`}>{connection.label}</span>
          </dd>
          <dt>Token</dt>
          <dd>
            <code>{site.credential.tokenHint}</code>
          </dd>
          <dt>Expires</dt>
          <dd>
            {site.credential.expiresAt ? formatDate(site.credential.expiresAt) : 'never (until revoked on the site)'}
          </dd>
        </dl>
      ) : (
        <p>Create an API token on {site.name}, then paste it here. It is stored encrypted and never shown again.</p>
      )}
      <form onSubmit={submit}>
        <Field label={stored ? 'New token' : 'Token'} error={error?.fieldMessage('token')}>
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="off"
              required
              value={token}
              onChange={(e) => setToken(e.target.value)}
            />
          )}
        </Field>
        <Field label="Expires (optional)" hint="Your local time." error={error?.fieldMessage('expiresAt')}>
          {(p) => <input {...p} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />}
        </Field>
        <ErrorNote
          error={error}
          title={error?.code === 'TOKEN_EXISTS' ? 'A token is already stored' : 'Could not save the token'}
          fields={['token', 'expiresAt']}
        />
        <div className="actions">
          {error?.code === 'TOKEN_EXISTS' ? (
            <button type="button" onClick={() => void replace.run()} disabled={replace.busy || token === ''}>
              Replace the stored token
            </button>
          ) : (
            <button type="submit" disabled={store.busy || replace.busy}>
              {stored ? 'Replace token' : 'Store token'}
            </button>
          )}
          {!stored ? null : removing ? (
            <>
              <button type="button" className="danger" onClick={() => void remove.run()} disabled={remove.busy}>
                Yes, remove the token
              </button>
              <button type="button" className="secondary" onClick={() => setRemoving(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" className="danger" onClick={() => setRemoving(true)}>
              Remove token
            </button>
          )}
        </div>
        <ErrorNote error={remove.error} title="Could not remove the token" />
      </form>
    </section>
  );
}
