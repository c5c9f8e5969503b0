/** The console's building blocks: every page uses these, so errors, labels and progress look and read the same. */
import { type ReactNode, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { type ApiError } from '../api/client';
import { isUnder, labelled, problemsOf, sentenceOf } from '../api/messages';
import { useSession } from '../session/session';

/**
 * An API error, where it happened, announced to screen readers: one sentence a person understands
 * (console/src/api/messages.ts), the problems of fields that are not on the form (with their labels),
 * and, folded, the code, request id and raw message for support. `fields`: the API field names this
 * form shows beside its own Fields (their problems appear there, not again here).
 */
export function ErrorNote({
  error,
  title,
  fields = [],
}: {
  error: ApiError | undefined;
  title?: string;
  fields?: readonly string[];
}) {
  if (error === undefined) {
    return null;
  }
  const listed = problemsOf(error).filter((p) => !fields.some((f) => isUnder(p.field, f)));
  const heading = title ?? 'Something went wrong';
  return (
    <div className="error-note" role="alert" data-code={error.code}>
      <p>
        <strong>{/[.!?]$/.test(heading) ? heading : `${heading}.`}</strong> {sentenceOf(error)}
        {error.retryAfter !== undefined && !Number.isNaN(error.retryAfter) ? (
          <> Try again in {error.retryAfter} s.</>
        ) : null}
      </p>
      {listed.length > 0 ? (
        <ul>
          {listed.map((p) => (
            <li key={`${p.field}:${p.problem}`}>
              {p.label === undefined ? (
                <>
                  <code>{p.field}</code>: {p.problem}
                </>
              ) : (
                labelled(p.label, p.problem)
              )}
            </li>
          ))}
        </ul>
      ) : null}
      <details className="support">
        <summary>Details for support</summary>
        <dl>
          <dt>Code</dt>
          <dd>
            <code>{error.code}</code>
          </dd>
          <dt>Request id</dt>
          <dd>
            <code>{error.requestId ?? 'none (no answer)'}</code>
          </dd>
          <dt>Message</dt>
          <dd>{error.message}</dd>
          {error.details.map((d) => (
            <dd key={`${d.field}:${d.message}`}>
              <code>{d.field}</code>: {d.message}
            </dd>
          ))}
        </dl>
      </details>
    </div>
  );
}

/** Progress for long work, announced politely. */
export function Busy({ label }: { label: string }) {
  return (
    <p className="busy" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

interface FieldProps {
  label: string;
  /** The input itself; it gets the id, the description and the error wired to the label. */
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ReactNode;
  hint?: ReactNode;
  /** What is wrong with this field, in plain words (ApiError.fieldMessage, or the page's own check). */
  error?: string;
}

/** A labelled control with its hint and its own error message. */
export function Field({ label, children, hint, error }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint === undefined ? undefined : hintId, error === undefined ? undefined : errorId]
    .filter(Boolean)
    .join(' ');
  return (
    <div className={error === undefined ? 'field' : 'field invalid'}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy || undefined, 'aria-invalid': error !== undefined || undefined })}
      {hint === undefined ? null : (
        <small id={hintId} className="hint">
          {hint}
        </small>
      )}
      {error === undefined ? null : (
        <small id={errorId} className="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

/**
 * A page's heading: focused when the page opens, so screen readers announce where the user is. When
 * the user acts in a workspace, a line under it says which one and with what role (read with the heading).
 */
export function PageTitle({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  const lineId = useId();
  const { workspaceId, workspaces } = useSession();
  const workspace = workspaceId === null ? undefined : workspaces.find((w) => w.id === workspaceId);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  const heading = (
    <h1 ref={ref} tabIndex={-1} aria-describedby={workspace === undefined ? undefined : lineId}>
      {children}
    </h1>
  );
  if (workspace === undefined) {
    return heading;
  }
  return (
    <div className="page-title">
      {heading}
      <p id={lineId} className="acting-in">
        In the workspace <strong>{workspace.name}</strong> ({workspace.role})
      </p>
    </div>
  );
}

export function formatDate(value: string | null | undefined): string {
  if (value === null || value === undefined) {
    return '—';
  }
  return new Date(value).toLocaleString();
}

/** Credits are cents. */
export function formatCredits(credits: number): string {
  return `${credits.toLocaleString()} credits ($${(credits / 100).toFixed(2)})`;
}

/** Cursor paging (newest first): the cursor of the shown page, and the cursors of the pages before it. */
export interface PagerState {
  /** The shown page's cursor; undefined: the first page. */
  cursor: string | undefined;
  hasPrevious: boolean;
  previous: () => void;
  /** Shows the page that starts at `nextCursor` (the shown page's answer). */
  next: (nextCursor: string) => void;
  /** Back to the first page (after something new was added at the top). */
  first: () => void;
}

export function usePager(): PagerState {
  // Cursors of the pages before the shown one: "previous" pops, "next" pushes.
  const [before, setBefore] = useState<Array<string | undefined>>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const previous = useCallback(() => {
    setCursor(before[before.length - 1]);
    setBefore(before.slice(0, -1));
  }, [before]);
  const next = useCallback(
    (nextCursor: string) => {
      setBefore([...before, cursor]);
      setCursor(nextCursor);
    },
    [before, cursor],
  );
  const first = useCallback(() => {
    setBefore([]);
    setCursor(undefined);
  }, []);
  return useMemo(
    () => ({ cursor, hasPrevious: before.length > 0, previous, next, first }),
    [cursor, before.length, previous, next, first],
  );
}

/** The Previous/Next buttons of a paged list; `nextCursor` is the shown page's (null: it is the last). */
export function Pager({
  pager,
  nextCursor,
  label,
  previousLabel = 'Previous page',
  nextLabel = 'Next page',
}: {
  pager: PagerState;
  nextCursor: string | null;
  /** The navigation's name ("Agent pages"). */
  label: string;
  previousLabel?: string;
  nextLabel?: string;
}) {
  return (
    <nav className="actions" aria-label={label}>
      <button type="button" className="secondary" disabled={!pager.hasPrevious} onClick={pager.previous}>
        {previousLabel}
      </button>
      <button
        type="button"
        className="secondary"
        disabled={nextCursor === null}
        onClick={() => {
          if (nextCursor !== null) {
            pager.next(nextCursor);
          }
        }}
      >
        {nextLabel}
      </button>
    </nav>
  );
}
