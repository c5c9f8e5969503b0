/** Earlier conversations (GET /api/sessions, newest first), each opened at /chat/:id. */
import { useState } from 'react';
import { NavLink } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate } from '../../components/ui';

type Summary = Schemas['SessionSummaryDto'];

function page(cursor?: string) {
  return unwrap(api.GET('/api/sessions', { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } }));
}

/** `version` changes when a conversation was started, answered or deleted: the list reads again. */
export function SessionList({ version }: { version: number }) {
  const first = useLoad(() => page(), [version]);
  const [older, setOlder] = useState<{ items: Summary[]; nextCursor: string | null } | null>(null);
  const [seen, setSeen] = useState(version);
  if (seen !== version) {
    setSeen(version);
    setOlder(null);
  }
  const more = useAction(async () => {
    const cursor = older?.nextCursor ?? first.data?.nextCursor;
    if (cursor) {
      const next = await page(cursor);
      setOlder((o) => ({ items: [...(o?.items ?? []), ...next.items], nextCursor: next.nextCursor }));
    }
  });
  const items = [...(first.data?.items ?? []), ...(older?.items ?? [])];
  const nextCursor = older === null ? first.data?.nextCursor : older.nextCursor;
  return (
    <nav className="session-list" aria-labelledby="earlier-heading">
      <h2 id="earlier-heading">Conversations</h2>
      <p>
        <NavLink to="/chat" end>
          New conversation
        </NavLink>
      </p>
      <ErrorNote error={first.error} title="Your conversations could not be read" />
      {first.data === undefined && first.error === undefined ? <Busy label="Loading conversations…" /> : null}
      {first.data !== undefined && items.length === 0 ? <p className="muted">No earlier conversations.</p> : null}
      <ul>
        {items.map((s) => (
          <li key={s.id}>
            <NavLink to={`/chat/${s.id}`}>{s.title ?? 'Untitled conversation'}</NavLink>
            <br />
            <small className="muted">
              {s.messageCount} messages · {formatDate(s.lastMessageAt ?? s.createdAt)}
            </small>
          </li>
        ))}
      </ul>
      <ErrorNote error={more.error} title="Older conversations could not be read" />
      {nextCursor ? (
        <button type="button" className="secondary" onClick={() => void more.run()} disabled={more.busy}>
          Show older conversations
        </button>
      ) : null}
    </nav>
  );
}
