/**
 * Pieces the inbox and the run page share: a tool call's input, readable; the Approve / Deny form
 * with its optional note; and whether the signed-in person may decide here.
 */
import { type FormEvent, useId, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field } from '../../components/ui';
import { useSession } from '../../session/session';

/** Longer than this, a value is folded (a summary with its start; the whole of it on demand). */
const FOLD_AT = 160;

function isPlain(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function Value({ value }: { value: unknown }) {
  if (isPlain(value)) {
    const text = value === null ? 'empty' : String(value);
    if (text.length <= FOLD_AT) {
      return text.includes('\n') ? <pre>{text}</pre> : <span className="content">{text}</span>;
    }
    return (
      <details>
        <summary>
          {text.slice(0, 60).split('\n')[0]}… ({text.length.toLocaleString()} characters)
        </summary>
        <pre>{text}</pre>
      </details>
    );
  }
  const json = JSON.stringify(value, null, 2) ?? '';
  if (json.length <= FOLD_AT * 3) {
    return <pre>{json}</pre>;
  }
  return (
    <details>
      <summary>Show all ({json.split('\n').length} lines)</summary>
      <pre>{json}</pre>
    </details>
  );
}

/** A tool call's input: one row per field (nested values pretty-printed, long ones folded). */
export function CallInput({ input, label }: { input: unknown; label: string }) {
  if (input === null || input === undefined || typeof input !== 'object' || Array.isArray(input)) {
    return <Value value={input} />;
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length === 0) {
    return <p className="muted">No input.</p>;
  }
  return (
    <dl className="facts call-input" aria-label={label}>
      {entries.map(([key, value]) => (
        <div key={key} className="row">
          <dt>{key}</dt>
          <dd>
            <Value value={value} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * Why the signed-in person cannot decide here (a viewer of the workspace), or undefined when they can.
 * In their own account they always can (their agents' approvals are the only ones they see).
 */
export function useDecideRefusal(): string | undefined {
  const { workspaceId, workspaces } = useSession();
  const role = workspaceId === null ? undefined : workspaces.find((w) => w.id === workspaceId)?.role;
  return role === 'viewer'
    ? 'You are a viewer in this workspace: you can see what waits, but only members, admins and the owner can approve or deny.'
    : undefined;
}

export type Decision = 'approve' | 'deny';

/** Approve / Deny with an optional note; `onDecided` gets the decision once the service took it. */
export function DecideForm({
  runId,
  approvalId,
  what,
  onDecided,
}: {
  runId: string;
  approvalId: string;
  /** The call, for the buttons' names ("Approve create_note on Reference Notebook"). */
  what: string;
  onDecided: (decision: Decision) => void | Promise<void>;
}) {
  const refusal = useDecideRefusal();
  const [note, setNote] = useState('');
  const refusalId = useId();
  const decide = useAction(async (decision: Decision) => {
    const trimmed = note.trim();
    await unwrap(
      api.POST('/api/runs/{id}/approvals/{approvalId}', {
        params: { path: { id: runId, approvalId } },
        body: { decision, ...(trimmed === '' ? {} : { note: trimmed }) },
      }),
    );
    await onDecided(decision);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
  };
  const disabled = refusal !== undefined || decide.busy;
  return (
    <form className="decide" onSubmit={submit} noValidate aria-label={`Decide on ${what}`}>
      <Field
        label="Note (optional)"
        hint="Kept with the decision; the run's timeline shows it."
        error={decide.error?.fieldMessage('note')}
      >
        {(p) => (
          <textarea
            {...p}
            rows={2}
            maxLength={1000}
            value={note}
            disabled={refusal !== undefined}
            onChange={(e) => setNote(e.target.value)}
          />
        )}
      </Field>
      <div className="actions">
        <button
          type="button"
          disabled={disabled}
          aria-describedby={refusal === undefined ? undefined : refusalId}
          aria-label={`Approve ${what}`}
          onClick={() => void decide.run('approve')}
        >
          Approve
        </button>
        <button
          type="button"
          className="danger"
          disabled={disabled}
          aria-describedby={refusal === undefined ? undefined : refusalId}
          aria-label={`Deny ${what}`}
          onClick={() => void decide.run('deny')}
        >
          Deny
        </button>
      </div>
      {refusal === undefined ? null : (
        <p className="hint" id={refusalId}>
          {refusal}
        </p>
      )}
      <ErrorNote error={decide.error} title="The decision was not taken" fields={['note']} />
    </form>
  );
}
