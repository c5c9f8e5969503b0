/** Run now, cancel, and the agent's runs (newest first, paged), refreshed while one is queued or active. */
import { type FormEvent, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field, formatDate, Pager, usePager } from '../../components/ui';
import { type AgentDetail, isLive, type Run, RunStatus } from './parts';

const PAGE_SIZE = 20;
/** How often the list is fetched again while a run is queued or active. */
const POLL_MS = 2000;
/** Otherwise, for agents that start on their own (schedule, webhook), now and then while the page is seen. */
const IDLE_POLL_MS = 15_000;

export function RunsPanel({ agent }: { agent: AgentDetail }) {
  const pager = usePager();
  const { cursor, first: firstPage } = pager;
  const runs = useLoad(
    () =>
      unwrap(
        api.GET('/api/agents/{id}/runs', {
          params: { path: { id: agent.id }, query: { limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) } },
        }),
      ),
    [agent.id, cursor],
  );
  const live = runs.data?.items.some(isLive) ?? false;
  const { reload } = runs;
  const startsOnItsOwn = agent.trigger.type !== 'manual';
  useEffect(() => {
    if (!live && !startsOnItsOwn) {
      return undefined;
    }
    const timer = setInterval(
      () => {
        if (live || document.visibilityState === 'visible') {
          void reload();
        }
      },
      live ? POLL_MS : IDLE_POLL_MS,
    );
    return () => clearInterval(timer);
  }, [live, startsOnItsOwn, reload]);

  const [input, setInput] = useState('');
  const [started, setStarted] = useState<Run>();
  const start = useAction(async () => {
    setStarted(undefined);
    const run = await unwrap(
      api.POST('/api/agents/{id}/runs', {
        params: { path: { id: agent.id } },
        body: input.trim() === '' ? {} : { input },
      }),
    );
    setStarted(run);
    setInput('');
    firstPage();
    await reload();
  });
  const cancel = useAction(async (runId: string) => {
    await unwrap(api.POST('/api/runs/{id}/cancel', { params: { path: { id: runId } } }));
    await reload();
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void start.run();
  };
  const activeRun = runs.data?.items.find(isLive);

  return (
    <>
      <section className="panel" aria-labelledby="run-now-heading">
        <h2 id="run-now-heading">Run now</h2>
        <form onSubmit={submit}>
          <Field
            label="Input (optional)"
            hint="What to ask the agent for this run, on top of its system prompt."
            error={start.error?.fieldMessage('input')}
          >
            {(p) => <textarea {...p} rows={3} value={input} onChange={(e) => setInput(e.target.value)} />}
          </Field>
          <ErrorNote error={start.error} title="Could not start a run" fields={['input']} />
          {start.error?.code === 'NO_CREDITS' ? (
            <p>
              <Link to="/billing">Buy credits</Link>
            </p>
          ) : null}
          <div className="actions">
            <button type="submit" disabled={start.busy}>
              {start.busy ? 'Starting…' : 'Run now'}
            </button>
            {activeRun === undefined ? null : (
              <button
                type="button"
                className="danger"
                disabled={cancel.busy}
                onClick={() => void cancel.run(activeRun.id)}
              >
                {cancel.busy ? 'Cancelling…' : `Cancel the ${activeRun.status} run`}
              </button>
            )}
          </div>
          {started === undefined ? null : (
            <p role="status">
              Run started: <Link to={`/runs/${started.id}`}>follow it on its page</Link>.
            </p>
          )}
        </form>
      </section>

      <section className="panel" aria-labelledby="runs-heading">
        <h2 id="runs-heading">Runs</h2>
        <div className="actions">
          <button type="button" className="secondary" disabled={runs.loading} onClick={() => void reload()}>
            Refresh runs
          </button>
        </div>
        <ErrorNote error={cancel.error} title="Could not cancel the run" />
        {runs.data === undefined ? (
          runs.error ? (
            <ErrorNote error={runs.error} title="Could not load the runs" />
          ) : (
            <Busy label="Loading runs…" />
          )
        ) : (
          <>
            {runs.error ? <ErrorNote error={runs.error} title="Could not refresh the runs" /> : null}
            {live ? <Busy label="A run is going on: this list refreshes every 2 seconds." /> : null}
            {runs.data.items.length === 0 ? (
              <p>No runs yet.</p>
            ) : (
              <table>
                <caption className="visually-hidden">Runs of {agent.name}, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Status</th>
                    <th scope="col">Triggered by</th>
                    <th scope="col">Queued</th>
                    <th scope="col">Ended</th>
                    <th scope="col">Credits</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {runs.data.items.map((run) => (
                    <tr key={run.id}>
                      <td>
                        <Link to={`/runs/${run.id}`}>Run {run.id.slice(0, 8)}</Link>
                      </td>
                      <td>
                        <RunStatus status={run.status} />
                        {run.error ? <small className="field-error"> {run.error.code}</small> : null}
                      </td>
                      <td>{run.triggeredBy}</td>
                      <td>{formatDate(run.queuedAt)}</td>
                      <td>{formatDate(run.endedAt)}</td>
                      <td>{run.usage.credits}</td>
                      <td>
                        {isLive(run) ? (
                          <button
                            type="button"
                            className="secondary"
                            disabled={cancel.busy}
                            onClick={() => void cancel.run(run.id)}
                            aria-label={`Cancel run ${run.id.slice(0, 8)}`}
                          >
                            Cancel
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <Pager
              pager={pager}
              nextCursor={runs.data.nextCursor}
              label="Run pages"
              previousLabel="Newer runs"
              nextLabel="Older runs"
            />
          </>
        )}
      </section>
    </>
  );
}
