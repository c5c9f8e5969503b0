/** /agents: the agents of the active account or workspace, with trigger, next firing and last run. */
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, PageTitle, Pager, usePager } from '../../components/ui';
import { type Agent, nextFiring, RunStatus, triggerLabel } from './parts';

const PAGE_SIZE = 20;

/** The agent's newest run (the list of agents does not carry it): one small request per row. */
function LastRun({ agentId }: { agentId: string }) {
  const last = useLoad(
    async () =>
      (await unwrap(api.GET('/api/agents/{id}/runs', { params: { path: { id: agentId }, query: { limit: 1 } } })))
        .items[0] ?? null,
    [agentId],
  );
  if (last.error) {
    return <span className="hint">unknown</span>;
  }
  if (last.data === undefined) {
    return <span className="hint">…</span>;
  }
  if (last.data === null) {
    return <span className="hint">never run</span>;
  }
  return (
    <Link to={`/runs/${last.data.id}`}>
      <span className="visually-hidden">Last run: </span>
      <RunStatus status={last.data.status} /> {formatDate(last.data.queuedAt)}
    </Link>
  );
}

export function AgentsPage() {
  const pager = usePager();
  const { cursor } = pager;
  const agents = useLoad(
    () =>
      unwrap(
        api.GET('/api/agents', {
          params: { query: { limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) } },
        }),
      ),
    [cursor],
  );
  return (
    <section>
      <PageTitle>Agents</PageTitle>
      <div className="actions">
        <Link className="button" to="/agents/new">
          New agent
        </Link>
      </div>
      {agents.data === undefined ? (
        agents.error ? (
          <ErrorNote error={agents.error} title="Could not load the agents" />
        ) : (
          <Busy label="Loading agents…" />
        )
      ) : agents.data.items.length === 0 && cursor === undefined ? (
        <p>No agents yet. Create one to run it by hand, on a schedule, or from a webhook.</p>
      ) : (
        <>
          <ErrorNote error={agents.error} title="Could not load the agents" />
          <table>
            <caption className="visually-hidden">Agents</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Trigger</th>
                <th scope="col">Next firing</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              {agents.data.items.map((a: Agent) => (
                <tr key={a.id}>
                  <td>
                    <Link to={`/agents/${a.id}`}>{a.name}</Link>
                  </td>
                  <td>{triggerLabel(a.trigger)}</td>
                  <td>{nextFiring(a.trigger)}</td>
                  <td>
                    <LastRun agentId={a.id} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager pager={pager} nextCursor={agents.data.nextCursor} label="Agent pages" />
        </>
      )}
    </section>
  );
}
