/** /agents/:agentId: the agent's settings, its webhook or schedule, Run now, its runs, delete. */
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, PageTitle } from '../../components/ui';
import { formatInZone, previewCron } from './cron';
import { type AgentDetail, ConfirmButton, triggerLabel } from './parts';
import { PolicyPanel } from './policy-panel';
import { RunsPanel } from './runs-panel';
import { SharePanel } from './share-panel';
import { WebhookPanel } from './webhook-panel';

export function AgentPage() {
  const { agentId = '' } = useParams();
  const agent = useLoad(() => unwrap(api.GET('/api/agents/{id}', { params: { path: { id: agentId } } })), [agentId]);
  if (agent.data === undefined) {
    return (
      <section>
        <PageTitle>Agent</PageTitle>
        {agent.error ? (
          <ErrorNote error={agent.error} title="Could not load the agent" />
        ) : (
          <Busy label="Loading the agent…" />
        )}
        <p>
          <Link to="/agents">All agents</Link>
        </p>
      </section>
    );
  }
  return <AgentView agent={agent.data} />;
}

function AgentView({ agent }: { agent: AgentDetail }) {
  const navigate = useNavigate();
  const sites = useLoad(
    async () => (await unwrap(api.GET('/api/vault/sites', { params: { query: { limit: 200 } } }))).items,
    [],
  );
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/api/agents/{id}', { params: { path: { id: agent.id } } }));
    await navigate('/agents', { replace: true });
  });
  const siteName = (id: string) => sites.data?.find((s) => s.id === id)?.name ?? id;

  return (
    <section>
      <p>
        <Link to="/agents">All agents</Link>
      </p>
      <PageTitle>{agent.name}</PageTitle>
      <div className="actions">
        <Link className="button secondary" to={`/agents/${agent.id}/edit`}>
          Edit agent
        </Link>
        <ConfirmButton
          label="Delete agent"
          question={`Delete ${agent.name}? Its schedule or webhook stops and a run that is going on is cancelled.`}
          confirmLabel="Delete for good"
          busy={remove.busy}
          onConfirm={() => void remove.run()}
        />
      </div>
      <ErrorNote error={remove.error} title="Could not delete the agent" />

      <section className="panel" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Settings</h2>
        <dl className="facts">
          <dt>Trigger</dt>
          <dd>{triggerLabel(agent.trigger)}</dd>
          <dt>Model</dt>
          <dd>{agent.model}</dd>
          <dt>Sites</dt>
          <dd>
            {agent.siteIds.length === 0 ? (
              'none'
            ) : (
              <ul className="plain">
                {agent.siteIds.map((id) => (
                  <li key={id}>
                    <Link to={`/vault/${id}`}>{siteName(id)}</Link>
                  </li>
                ))}
              </ul>
            )}
          </dd>
          <dt>Created</dt>
          <dd>{formatDate(agent.createdAt)}</dd>
          <dt>Changed</dt>
          <dd>{formatDate(agent.updatedAt)}</dd>
        </dl>
        <h3>System prompt</h3>
        <pre>{agent.systemPrompt}</pre>
      </section>

      {agent.trigger.type === 'scheduled' ? <SchedulePanel agent={agent} /> : null}
      <WebhookPanel agent={agent} />
      <PolicyPanel agent={agent} />
      <RunsPanel agent={agent} />
      <SharePanel agent={agent} />
    </section>
  );
}

function SchedulePanel({ agent }: { agent: AgentDetail }) {
  if (agent.trigger.type !== 'scheduled') {
    return null;
  }
  const { cron, timezone } = agent.trigger;
  const preview = previewCron(cron, timezone, 5);
  return (
    <section className="panel" aria-labelledby="schedule-heading">
      <h2 id="schedule-heading">Schedule</h2>
      <dl className="facts">
        <dt>Cron expression</dt>
        <dd>
          <code>{cron}</code>
        </dd>
        <dt>Time zone</dt>
        <dd>{timezone}</dd>
        <dt>Next firing (Temporal)</dt>
        <dd>
          {agent.schedule === null
            ? 'The schedule is missing in Temporal: save the agent again to recreate it.'
            : agent.schedule === undefined
              ? 'Temporal did not answer in time: reload the page to see it.'
              : agent.schedule.nextRunAt
                ? formatInZone(new Date(agent.schedule.nextRunAt), timezone)
                : 'none'}
        </dd>
        {agent.schedule?.paused ? (
          <>
            <dt>State</dt>
            <dd>paused</dd>
          </>
        ) : null}
        {agent.schedule?.skippedOverlaps ? (
          <>
            <dt>Skipped firings</dt>
            <dd>{agent.schedule.skippedOverlaps} (a run was still going)</dd>
          </>
        ) : null}
      </dl>
      <h3 id="schedule-next-firings">Next five firings</h3>
      {preview.ok ? (
        <ol aria-labelledby="schedule-next-firings">
          {preview.firings.map((d) => (
            <li key={d.toISOString()}>
              <time dateTime={d.toISOString()}>{formatInZone(d, timezone)}</time>
            </li>
          ))}
        </ol>
      ) : (
        <p className="field-error">{preview.problem}</p>
      )}
    </section>
  );
}
