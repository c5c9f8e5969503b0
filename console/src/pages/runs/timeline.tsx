/** A run's timeline, entry by entry, as GET /api/runs/{id} gives it (new entries only ever append). */
import { type Schemas } from '../../api/client';
import { formatDate } from '../../components/ui';
import { CallInput, type Decision, DecideForm } from '../approvals/parts';
import { SCOPE_WORDS } from '../approvals/words';

export type Run = Schemas['RunResponseDto'];
export type Entry = NonNullable<Run['timeline']>[number];
export type Awaiting = NonNullable<Run['awaiting']>;

/** What an entry needs of the run: the approval it waits for, and what to do once it was decided. */
interface Waits {
  runId: string;
  awaiting: Awaiting | null | undefined;
  onDecided: (decision: Decision) => void | Promise<void>;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

function Body({ entry, waits }: { entry: Entry; waits: Waits }) {
  switch (entry.type) {
    case 'approval_requested': {
      const what = `${entry.tool} on ${entry.site}`;
      return (
        <>
          <strong>Waiting for approval</strong> of <code>{entry.tool}</code> on {entry.site}{' '}
          <span className="muted">
            (a call that {SCOPE_WORDS[entry.scope]}), until {formatDate(entry.expiresAt)}
          </span>
          <details>
            <summary>Input</summary>
            <CallInput input={entry.input} label={`Input of ${what}`} />
          </details>
          {waits.awaiting?.approvalId === entry.approvalId ? (
            <DecideForm runId={waits.runId} approvalId={entry.approvalId} what={what} onDecided={waits.onDecided} />
          ) : null}
        </>
      );
    }
    case 'approval_decided':
      return (
        <>
          {entry.decision === 'expired' ? (
            <strong>No decision in time</strong>
          ) : (
            <>
              <strong>{entry.decision === 'approve' ? 'Approved' : 'Denied'}</strong>
              {entry.by === null ? null : <> by {entry.by.name}</>}
            </>
          )}
          {entry.decision === 'approve' ? null : <span className="muted">: the call was not made</span>}
          {entry.note === null || entry.note === '' ? null : <p className="content">“{entry.note}”</p>}
        </>
      );
    case 'triggered':
      return (
        <>
          <strong>Triggered</strong>
          {entry.triggeredBy === undefined ? null : <> by {entry.triggeredBy}</>}
          {entry.systemPromptSource === 'webhook_action' ? <> (the payload's action replaced the prompt)</> : null}
          {entry.input === undefined ? null : <pre>{entry.input}</pre>}
          {entry.payload === undefined || entry.payload === null ? null : <pre>{json(entry.payload)}</pre>}
        </>
      );
    case 'model_turn':
      return (
        <>
          <strong>Model turn</strong>{' '}
          <span className="muted">
            {entry.toolUses === 1 ? '1 tool call' : `${entry.toolUses} tool calls`} asked
            {entry.stopReason === undefined ? '' : `, stop: ${entry.stopReason}`}; {entry.usage.inputTokens ?? 0} input
            / {entry.usage.outputTokens ?? 0} output tokens, {entry.usage.credits ?? 0} credits
          </span>
          {entry.text === '' ? null : <p className="content">{entry.text}</p>}
        </>
      );
    case 'tool_call':
      return (
        <>
          <strong>Tool call</strong> <code>{entry.tool}</code> <span className="muted">on {entry.site}</span>
          <details>
            <summary>Input</summary>
            <pre>{json(entry.input)}</pre>
          </details>
        </>
      );
    case 'tool_result':
      return (
        <>
          <strong>Tool result</strong> <code>{entry.tool}</code> <span className="muted">on {entry.site}</span>{' '}
          <span className={entry.ok ? 'badge ok' : 'badge bad'}>{entry.ok ? 'ok' : 'failed'}</span>
          {entry.attempt > 1 ? <span className="muted"> (attempt {entry.attempt})</span> : null}
          {entry.durationMs === undefined ? null : <span className="muted"> in {Math.round(entry.durationMs)} ms</span>}
          {entry.ok ? (
            <details>
              <summary>
                Result
                {entry.truncated === undefined
                  ? null
                  : ` (cut: the site answered ${entry.truncated.toLocaleString()} bytes; the run kept the first 65,536)`}
              </summary>
              <pre>{entry.truncated === undefined ? json(entry.result) : String(entry.result)}</pre>
            </details>
          ) : (
            <p className="field-error">
              {entry.error} {entry.code === undefined ? null : <code>{entry.code}</code>}
            </p>
          )}
        </>
      );
    case 'waiting':
      return (
        <>
          <strong>Waiting</strong>{' '}
          <span className="muted">
            ({entry.reason}) until {formatDate(entry.until)}
          </span>
        </>
      );
    case 'token_refreshed':
      return (
        <>
          <strong>Token refreshed</strong> <span className="muted">for {entry.site}</span>
        </>
      );
    case 'completed':
      return (
        <>
          <strong>Completed</strong>
          {entry.output === undefined ? null : <p className="content">{entry.output}</p>}
        </>
      );
    case 'failed':
      return (
        <>
          <strong>Failed</strong>: {entry.error} {entry.code === undefined ? null : <code>{entry.code}</code>}
        </>
      );
    case 'cancelled':
      return <strong>Cancelled</strong>;
    case 'history_unavailable':
      return (
        <>
          <strong>Steps no longer available</strong>: <span className="muted">{entry.message}</span>
        </>
      );
    default:
      return null;
  }
}

/** The timeline as an ordered list; a live region, so each new step is read out as it arrives. */
export function Timeline({ entries, waits }: { entries: Entry[]; waits: Waits }) {
  return (
    <ol className="timeline" aria-live="polite" aria-label="Timeline">
      {entries.map((entry, i) => (
        // Entries only append, so an entry's place is its identity: nothing re-renders or jumps.
        <li key={i} className={`entry ${entry.type}`}>
          <small className="muted">
            <time dateTime={entry.at}>{formatDate(entry.at)}</time>
          </small>{' '}
          <Body entry={entry} waits={waits} />
        </li>
      ))}
    </ol>
  );
}
