/**
 * One conversation at /chat/:token: its sites, its messages, and a composer whose answer streams in
 * (text as it arrives, each tool call and its result as they happen, the usage at the end).
 */
import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, ApiError, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field, formatDate } from '../../components/ui';
import { MessageView, type ShownMessage } from './message-view';
import { withText, withToolCall, withToolResult } from './parts';
import { streamTurn } from './stream';

type Session = Schemas['SessionDetailDto'];

function SessionFacts({ session }: { session: Session }) {
  return (
    <div className="panel session-facts">
      <p>
        Sites and tools:{' '}
        {session.sites.map((site, i) => (
          <span key={site.siteId}>
            {i > 0 ? '; ' : null}
            <strong>{site.name}</strong> ({site.tools.join(', ') || 'no tools'})
            {site.missingScopes !== undefined ? (
              <>
                {' '}
                <span className="badge warn">needs {site.missingScopes.join(', ') || 'connecting again'}</span>{' '}
                <Link to={`/vault/${site.siteId}`}>Connect {site.name} again</Link>
              </>
            ) : null}
          </span>
        ))}
      </p>
      <p className="muted">
        Started {formatDate(session.createdAt)}; open until {formatDate(session.expiresAt)}.
      </p>
    </div>
  );
}

export function Conversation({ token, onChanged }: { token: string; onChanged: () => void }) {
  const navigate = useNavigate();
  const loaded = useLoad(() => unwrap(api.GET('/api/sessions/{token}', { params: { path: { token } } })), [token]);
  const [messages, setMessages] = useState<ShownMessage[]>([]);
  const [live, setLive] = useState<ShownMessage | null>(null);
  const [draft, setDraft] = useState('');
  const [turnError, setTurnError] = useState<ApiError>();
  const [sending, setSending] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => {
    setMessages(loaded.data?.messages ?? []);
  }, [loaded.data]);
  useEffect(() => () => abort.current?.abort(), []);
  // Follow the answer as it grows, without jumping when nothing changed.
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'nearest' });
  }, [messages.length, live]);

  const remove = useAction(async () => {
    await unwrap(api.DELETE('/api/sessions/{token}', { params: { path: { token } } }));
    onChanged();
    await navigate('/chat');
  });

  const send = async () => {
    const content = draft.trim();
    if (content === '' || sending) {
      return;
    }
    setSending(true);
    setTurnError(undefined);
    const mine: ShownMessage = { id: `pending-${Date.now()}`, role: 'user', content };
    setMessages((all) => [...all, mine]);
    setDraft('');
    let reply: ShownMessage = { id: 'live', role: 'assistant', content: '', parts: [] };
    const update = (next: ShownMessage) => {
      reply = next;
      setLive(next);
    };
    update(reply);
    const controller = new AbortController();
    abort.current = controller;
    try {
      await streamTurn(
        token,
        content,
        {
          context: () => update({ ...reply, condensed: true }),
          text: (text) => update({ ...reply, parts: withText(reply.parts ?? [], text) }),
          toolCall: (call) => update({ ...reply, parts: withToolCall(reply.parts ?? [], call) }),
          toolResult: (result) => update({ ...reply, parts: withToolResult(reply.parts ?? [], result) }),
          done: ({ messageId, usage }) => update({ ...reply, id: messageId, usage }),
        },
        controller.signal,
      );
      setMessages((all) => [...all, reply]);
      onChanged();
    } catch (err) {
      const failure = err instanceof ApiError ? err : new ApiError(undefined, undefined);
      if (!controller.signal.aborted) {
        setTurnError(failure);
      }
      // A turn the balance (or its input limit) ended after the model had begun is saved as far as it
      // got, marked as cut. Any other failed turn saves nothing: the log keeps what happened (a tool may
      // have acted), and the message goes back into the box to send again.
      const shown = (reply.parts ?? []).length > 0;
      if (shown && (failure.code === 'NO_CREDITS' || failure.code === 'VALIDATION_ERROR')) {
        setMessages((all) => [...all, { ...reply, id: `cut-${Date.now()}`, cut: true }]);
        onChanged();
      } else {
        if (shown) {
          setMessages((all) => [...all, { ...reply, id: `unsaved-${Date.now()}` }]);
        }
        setDraft(content);
      }
    } finally {
      abort.current = null;
      setLive(null);
      setSending(false);
    }
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void send();
  };
  // Enter sends; Shift+Enter is a new line (and Enter while composing with an input method is not a send).
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
    }
  };

  if (loaded.error !== undefined) {
    return <ErrorNote error={loaded.error} title="This conversation cannot be opened" />;
  }
  if (loaded.data === undefined) {
    return <Busy label="Loading the conversation…" />;
  }
  const session = loaded.data;
  return (
    <div className="conversation">
      <div className="conversation-head">
        <h2>{session.title ?? 'Untitled conversation'}</h2>
        <button type="button" className="danger" onClick={() => void remove.run()} disabled={remove.busy}>
          Delete conversation
        </button>
      </div>
      <ErrorNote error={remove.error} title="The conversation was not deleted" />
      <SessionFacts session={session} />
      <section className="message-log" role="log" aria-live="polite" aria-label="Messages">
        {messages.length === 0 && live === null ? <p className="muted">No messages yet.</p> : null}
        {messages.map((message) => (
          <MessageView key={message.id} message={message} />
        ))}
        {live === null ? null : <MessageView message={live} streaming />}
        <div ref={end} />
      </section>
      {sending ? <Busy label="The assistant is answering…" /> : null}
      <ErrorNote
        error={turnError}
        title="The message was not answered (nothing of this turn was saved)"
        fields={['content']}
      />
      <form className="composer" onSubmit={submit}>
        <Field
          label="Message"
          hint="Enter sends; Shift+Enter starts a new line."
          error={turnError?.fieldMessage('content')}
        >
          {(p) => (
            <textarea
              {...p}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={onKeyDown}
              rows={3}
              maxLength={100_000}
            />
          )}
        </Field>
        <div className="actions">
          <button type="submit" disabled={sending || draft.trim() === ''}>
            Send
          </button>
          {sending ? (
            <button type="button" className="secondary" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : null}
        </div>
      </form>
    </div>
  );
}
