/**
 * One run at /runs/:runId: its status, trigger and input, a timeline that follows the run while it
 * is queued or active (GET /api/runs/{id} about every second, stopping once it ended), the usage,
 * the final answer or the error, and Cancel while it can be cancelled.
 */
import { useEffect } from 'react';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, PageTitle } from '../../components/ui';
import { approvalsChanged } from '../approvals/count';
import { type Run, Timeline } from './timeline';

const POLL_MS = 1000;

function isLive(run: Run | undefined): boolean {
  return run?.status === 'queued' || run?.status === 'active';
}

function StatusBadge({ status }: { status: Run['status'] }) {
  const tone = status === 'completed' ? 'ok' : status === 'failed' ? 'bad' : status === 'cancelled' ? '' : 'warn';
  return <span className={`badge ${tone}`}>{status}</span>;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

function RunFacts({ run }: { run: Run }) {
  return (
    <dl className="facts">
      <dt>Status</dt>
      <dd>
        <span role="status">
          <StatusBadge status={run.status} />
          {run.awaiting === null || run.awaiting === undefined ? null : (
            <>
              {' '}
              <span className="badge warn">Waiting for approval</span>
            </>
          )}
        </span>
      </dd>
      <dt>Triggered by</dt>
      <dd>{run.triggeredBy}</dd>
      <dt>Queued</dt>
      <dd>{formatDate(run.queuedAt)}</dd>
      <dt>Started</dt>
      <dd>{formatDate(run.startedAt)}</dd>
      <dt>Ended</dt>
      <dd>{formatDate(run.endedAt)}</dd>
      <dt>Usage</dt>
      <dd>
        {run.usage.inputTokens} input tokens, {run.usage.outputTokens} output tokens, {run.usage.credits} credits
      </dd>
      <dt>Workflow</dt>
      <dd>
        <code>{run.temporal.workflowId}</code>
        {run.temporal.runId !== null && (
          <>
            {' '}
            execution <code>{run.temporal.runId}</code>
          </>
        )}
      </dd>
    </dl>
  );
}

export function RunPage() {
  const { runId = '' } = useParams();
  const loaded = useLoad(() => unwrap(api.GET('/api/runs/{id}', { params: { path: { id: runId } } })), [runId]);
  const run = loaded.data;
  const agent = useLoad(
    () =>
      run === undefined
        ? Promise.resolve(undefined)
        : unwrap(api.GET('/api/agents/{id}', { params: { path: { id: run.agentId } } })),
    [run?.agentId],
  );
  const cancel = useAction(async () => {
    await unwrap(api.POST('/api/runs/{id}/cancel', { params: { path: { id: runId } } }));
    await loaded.reload();
  });

  // While the run goes on, read it again a second after each answer (never two reads at once);
  // the page keeps what it shows meanwhile, so nothing flickers and the scroll stays where it is.
  const live = isLive(run);
  const { reload, loading } = loaded;
  useEffect(() => {
    if (!live || loading) {
      return;
    }
    const timer = setTimeout(() => void reload(), POLL_MS);
    return () => clearTimeout(timer);
  }, [live, loading, reload]);

  // A run that starts (or stops) waiting changes the navigation's count of waiting approvals.
  const waitingFor = run?.awaiting?.approvalId;
  useEffect(() => {
    approvalsChanged();
  }, [waitingFor]);

  if (run === undefined) {
    return (
      <section>
        <PageTitle>Run</PageTitle>
        {loaded.error === undefined ? (
          <Busy label="Loading the run…" />
        ) : (
          <ErrorNote error={loaded.error} title="The run cannot be shown" />
        )}
      </section>
    );
  }
  const answer = (run.timeline ?? []).findLast((e) => e.type === 'completed');
  return (
    <section className="run">
      <PageTitle>Run {run.id.slice(0, 8)}</PageTitle>
      <p>
        <Link to={`/agents/${run.agentId}`}>Back to the agent{agent.data ? ` ${agent.data.name}` : ''}</Link>
      </p>
      <RunFacts run={run} />
      {live ? (
        <div className="actions">
          <button type="button" className="danger" onClick={() => void cancel.run()} disabled={cancel.busy}>
            Cancel run
          </button>
          <Busy
            label={
              run.status === 'queued'
                ? 'Waiting to start…'
                : run.awaiting
                  ? `Waiting for approval of ${run.awaiting.tool} on ${run.awaiting.site}…`
                  : 'Running…'
            }
          />
        </div>
      ) : null}
      <ErrorNote error={cancel.error} title="The run was not cancelled" />
      {/* A failed reread while the run goes on: shown, and the next poll tries again. */}
      <ErrorNote error={loaded.error} title="The run could not be read again" />
      <h2>Input</h2>
      {run.input === null && (run.payload === null || run.payload === undefined) ? (
        <p className="muted">No input.</p>
      ) : null}
      {run.input === null ? null : <pre>{run.input}</pre>}
      {run.payload === null || run.payload === undefined ? null : (
        <>
          <h3>Webhook payload</h3>
          <pre>{json(run.payload)}</pre>
        </>
      )}
      {run.status === 'completed' ? (
        <section aria-labelledby="answer-heading">
          <h2 id="answer-heading">Answer</h2>
          <div className="panel content">{answer?.type === 'completed' ? (answer.output ?? '') : '—'}</div>
        </section>
      ) : null}
      {run.error === null || run.error === undefined ? null : (
        <div className="error-note" role="alert" data-code={run.error.code}>
          <strong>The run failed:</strong> {run.error.error} <code>{run.error.code}</code>
        </div>
      )}
      <h2>Timeline</h2>
      <Timeline
        entries={run.timeline ?? []}
        waits={{
          runId: run.id,
          awaiting: run.awaiting,
          onDecided: async () => {
            approvalsChanged();
            await loaded.reload();
          },
        }}
      />
    </section>
  );
}
