/**
 * /approvals: the calls agents wait to make until a person decides (newest first), each with its
 * agent, site, tool, what it does, its input, when it was asked and until when it waits, and Approve /
 * Deny with an optional note. A decided call leaves the list with a sentence saying what happened.
 * "Show" switches to the decided ones (approved, denied, no decision in time, cancelled).
 */
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Pager, PageTitle, usePager } from '../../components/ui';
import { approvalsChanged } from './count';
import { CallInput, type Decision, DecideForm, useDecideRefusal } from './parts';
import { type Approval, type ApprovalStatus, relativeTime, SCOPE_WORDS, STATUS_WORDS } from './words';

const PAGE = 20;
const SHOWN: ApprovalStatus[] = ['pending', 'approved', 'denied', 'expired', 'cancelled'];

function callOf(a: Approval): string {
  return `${a.tool} on ${a.site}`;
}

function When({ iso, prefix }: { iso: string; prefix: string }) {
  return (
    <>
      {prefix}{' '}
      <time dateTime={iso} title={new Date(iso).toLocaleString()}>
        {relativeTime(iso)}
      </time>
    </>
  );
}

function ApprovalItem({ approval, onDecided }: { approval: Approval; onDecided: (d: Decision) => void }) {
  const a = approval;
  const headingId = `approval-${a.id}`;
  return (
    <li>
      <article className="panel approval" aria-labelledby={headingId}>
        <h2 id={headingId}>
          <code>{a.tool}</code> on {a.site}
        </h2>
        <p>
          <strong>{a.agentName}</strong> asks to make a call that <strong>{SCOPE_WORDS[a.scope]}</strong>.{' '}
          <Link to={`/runs/${a.runId}`}>See the run</Link>
        </p>
        <p className="muted">
          <When iso={a.requestedAt} prefix="Asked" />
          {a.status === 'pending' ? (
            <>
              {'; '}
              <When iso={a.expiresAt} prefix="a decision is due" /> (without one, the call is not made)
            </>
          ) : null}
        </p>
        <h3>Input</h3>
        <CallInput input={a.input} label={`Input of ${callOf(a)}`} />
        {a.status === 'pending' ? (
          <DecideForm runId={a.runId} approvalId={a.id} what={callOf(a)} onDecided={onDecided} />
        ) : (
          <p>
            <span className={a.status === 'approved' ? 'badge ok' : a.status === 'denied' ? 'badge bad' : 'badge'}>
              {STATUS_WORDS[a.status]}
            </span>
            {a.decidedBy === null ? null : <> by {a.decidedBy.name}</>}
            {a.decidedAt === null ? null : (
              <>
                {' '}
                <When iso={a.decidedAt} prefix="" />
              </>
            )}
            {a.note === null || a.note === '' ? null : <> — “{a.note}”</>}
          </p>
        )}
      </article>
    </li>
  );
}

export function ApprovalsPage() {
  const [status, setStatus] = useState<ApprovalStatus>('pending');
  const pager = usePager();
  const [decided, setDecided] = useState<string[]>([]);
  const [said, setSaid] = useState<string>('');
  const refusal = useDecideRefusal();
  const page = useLoad(
    () =>
      unwrap(
        api.GET('/api/approvals', {
          params: { query: { status, limit: PAGE, ...(pager.cursor === undefined ? {} : { cursor: pager.cursor }) } },
        }),
      ),
    [status, pager.cursor],
  );
  const items = (page.data?.items ?? []).filter((a) => !decided.includes(a.id));

  const onDecided = (a: Approval) => (decision: Decision) => {
    setDecided((ids) => [...ids, a.id]);
    setSaid(
      decision === 'approve'
        ? `Approved: ${a.agentName} makes the call ${callOf(a)} and its run goes on.`
        : `Denied: ${a.agentName} does not make the call ${callOf(a)}; its run goes on without it.`,
    );
    approvalsChanged();
  };

  return (
    <section>
      <PageTitle>Approvals</PageTitle>
      <p>
        Agents whose policy asks for approval wait here before a call that changes, deletes or administers something on
        a site. Nothing is called and nothing is charged while they wait.
      </p>
      <div className="field">
        <label htmlFor="approvals-show">Show</label>
        <select
          id="approvals-show"
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as ApprovalStatus);
            setSaid('');
            pager.first();
          }}
        >
          {SHOWN.map((s) => (
            <option key={s} value={s}>
              {STATUS_WORDS[s]}
            </option>
          ))}
        </select>
      </div>
      <p role="status" className={said === '' ? undefined : 'notice'}>
        {said}
      </p>
      {status === 'pending' && refusal !== undefined ? <p className="notice">{refusal}</p> : null}
      <ErrorNote error={page.error} title="The approvals could not be read" />
      {page.data === undefined ? (
        page.error === undefined ? (
          <Busy label="Loading the approvals…" />
        ) : null
      ) : items.length === 0 ? (
        <p className="muted">
          {status === 'pending'
            ? 'Nothing waits for a decision. When an agent asks before a call, it shows up here.'
            : 'None.'}
        </p>
      ) : (
        <ul className="plain approvals" aria-label={STATUS_WORDS[status]}>
          {items.map((a) => (
            <ApprovalItem key={a.id} approval={a} onDecided={onDecided(a)} />
          ))}
        </ul>
      )}
      {page.data === undefined || (page.data.nextCursor === null && !pager.hasPrevious) ? null : (
        <Pager pager={pager} nextCursor={page.data.nextCursor} label="Approval pages" />
      )}
    </section>
  );
}
