import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field } from '../../components/ui';
import type { Site } from './connection';

/** A datetime-local value (the user's time) as the ISO time the API takes; undefined when empty. */
function isoOf(local: string): string | undefined {
  if (local.trim() === '') {
    return undefined;
  }
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/**
 * Store or replace an API token made on the site, for any site (an OAuth site takes one too: the
 * service sends it as a bearer token). The token is sent once and never shown again: only its hint
 * and expiry come back. Its state and removal are the connection panel's.
 */
export function BearerToken({ site, onChanged }: { site: Site; onChanged: () => Promise<void> }) {
  const kind = site.credential.kind;
  const oauthSite = site.auth.type === 'oauth2';
  const [token, setToken] = useState('');
  const [expires, setExpires] = useState('');
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
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void (kind !== null ? replace.run() : store.run());
  };
  const error = store.error ?? replace.error;
  const submitLabel = kind === null ? 'Store token' : kind === 'bearer' ? 'Replace token' : 'Use this token instead';

  return (
    <section aria-labelledby="token-heading">
      <h3 id="token-heading">{oauthSite ? 'Or store an API token' : 'API token'}</h3>
      <p className="hint">
        {kind === 'oauth2'
          ? `A token replaces the OAuth connection: calls then use the token's own permissions on ${site.name}.`
          : `Create an API token on ${site.name}, then paste it here. It is stored encrypted and never shown again.`}
      </p>
      <form onSubmit={submit}>
        <Field label={kind === 'bearer' ? 'New token' : 'Token'} error={error?.fieldMessage('token')}>
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
              {submitLabel}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
