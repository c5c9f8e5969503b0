import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { Busy, ErrorNote, PageTitle } from '../../components/ui';
import { useSession } from '../../session/session';
import { UserRow } from './user-row';

type User = Schemas['AdminUserDto'];

const PAGE_SIZE = 25;

/** Admins: every user, in order of registration, one page at a time; tier, credits, role and subscription per user. */
export function AdminPage() {
  const { me, refreshMe } = useSession();
  const [users, setUsers] = useState<User[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const page = useAction(async (cursor?: string) => {
    const answer = await unwrap(
      api.GET('/api/admin/users', { params: { query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } } }),
    );
    setUsers((shown) => (cursor === undefined ? answer.items : [...shown, ...answer.items]));
    setNextCursor(answer.nextCursor);
    setLoaded(true);
  });
  const { run } = page;
  useEffect(() => {
    void run();
  }, [run]);
  const changed = useCallback(
    async (user: User) => {
      setUsers((shown) => shown.map((u) => (u.id === user.id ? user : u)));
      if (user.id === me?.id) {
        await refreshMe();
      }
    },
    [me?.id, refreshMe],
  );
  return (
    <section>
      <PageTitle>Admin: users</PageTitle>
      <p className="hint">
        Changes apply from the user’s next request. Credits set here are written to their ledger as an administrator’s
        adjustment. A tier set here holds against their subscription’s renewals until you return them to their
        subscription’s plan or the plan itself changes. Granting <code>admin</code> makes them an administrator too.
      </p>
      {!loaded && page.busy ? <Busy label="Loading users…" /> : null}
      {users.length > 0 ? (
        <table aria-label="Users">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Tier</th>
              <th scope="col">Credits</th>
              <th scope="col">Role</th>
              <th scope="col">Subscription</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <UserRow key={u.id} user={u} onChanged={changed} />
            ))}
          </tbody>
        </table>
      ) : null}
      <ErrorNote error={page.error} title="Could not load users" />
      {nextCursor === null ? null : (
        <div className="actions">
          <button type="button" className="secondary" disabled={page.busy} onClick={() => void run(nextCursor)}>
            {page.busy ? 'Loading more users…' : 'Show more users'}
          </button>
        </div>
      )}
    </section>
  );
}
