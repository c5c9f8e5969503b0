/** /agents/new and /agents/:agentId/edit: every field the API takes for an agent. */
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field, PageTitle } from '../../components/ui';
import { useSession } from '../../session/session';
import { type CountGate, countGate, featureGate, type Gate, LimitNote } from '../billing/gates';
import { type Agent } from './parts';
import { changedPolicy, POLICY_FIELDS, PolicyFields, policyDraftOf, policyOf, type PolicyDraft } from './policy-fields';
import { handOverSecret } from './secret-handover';
import { draftOf, TriggerFields, triggerOf, type TriggerDraft } from './trigger-fields';

/** The API's field names this form shows beside their own controls. */
const AGENT_FIELDS = [
  'name',
  'systemPrompt',
  'model',
  'siteIds',
  'trigger.type',
  'trigger.cron',
  'trigger.timezone',
  'trigger.schema',
  ...POLICY_FIELDS,
];

type Site = Schemas['SiteResponseDto'];

/** The vault's sites an agent can use (the API allows 200 per page; an agent takes at most 20). */
function useSites() {
  return useLoad(
    async () => (await unwrap(api.GET('/api/vault/sites', { params: { query: { limit: 200 } } }))).items,
    [],
  );
}

interface PlanGates {
  triggers: { scheduled: Gate | null; webhook: Gate | null };
  /** A new agent past the plan's agent limit. */
  agents: CountGate | null;
}

/**
 * What the user's plan leaves out, known before the form is filled. In a workspace the owner's plan
 * applies, which the console cannot read: the API's answer at save says it there.
 */
function usePlanGates(isNew: boolean): PlanGates {
  const { workspaceId } = useSession();
  const personal = workspaceId === null;
  const billing = useLoad(async () => (personal ? unwrap(api.GET('/api/billing')) : undefined), [personal]);
  const agents = useLoad(async () => {
    if (!personal || !isNew) {
      return undefined;
    }
    const page = await unwrap(api.GET('/api/agents', { params: { query: { limit: 200 } } }));
    // More than a page is more than any plan allows.
    return page.items.length + (page.nextCursor === null ? 0 : 1);
  }, [personal, isNew]);
  return {
    triggers: {
      scheduled: featureGate(billing.data, (l) => l.scheduledAgents),
      webhook: featureGate(billing.data, (l) => l.webhookAgents),
    },
    agents: countGate(billing.data, agents.data, (l) => l.agents),
  };
}

export function AgentFormPage() {
  const { agentId } = useParams();
  const existing = useLoad(
    async () =>
      agentId === undefined ? undefined : unwrap(api.GET('/api/agents/{id}', { params: { path: { id: agentId } } })),
    [agentId],
  );
  const sites = useSites();
  const gates = usePlanGates(agentId === undefined);
  if (agentId !== undefined && existing.data === undefined) {
    return (
      <section>
        <PageTitle>Edit agent</PageTitle>
        {existing.error ? (
          <ErrorNote error={existing.error} title="Could not load the agent" />
        ) : (
          <Busy label="Loading the agent…" />
        )}
      </section>
    );
  }
  return (
    <AgentForm
      key={existing.data?.id ?? 'new'}
      agent={existing.data}
      sites={sites.data}
      sitesError={sites.error}
      gates={gates}
    />
  );
}

function AgentForm({
  agent,
  sites,
  sitesError,
  gates,
}: {
  agent: Agent | undefined;
  sites: Site[] | undefined;
  sitesError: unknown;
  gates: PlanGates;
}) {
  const navigate = useNavigate();
  const [name, setName] = useState(agent?.name ?? '');
  const [systemPrompt, setSystemPrompt] = useState(agent?.systemPrompt ?? '');
  const [model, setModel] = useState(agent?.model ?? '');
  const [siteIds, setSiteIds] = useState<string[]>(agent?.siteIds ?? []);
  const [trigger, setTrigger] = useState<TriggerDraft>(() => draftOf(agent?.trigger));
  const [policy, setPolicy] = useState<PolicyDraft>(() => policyDraftOf(agent));
  const [localProblem, setLocalProblem] = useState<string>();

  const save = useAction(async () => {
    const built = triggerOf(trigger);
    if ('problem' in built) {
      setLocalProblem(built.problem);
      return;
    }
    const sections = policyOf(policy);
    if ('problem' in sections) {
      setLocalProblem(sections.problem);
      return;
    }
    setLocalProblem(undefined);
    let saved: Agent;
    if (agent === undefined) {
      saved = await unwrap(
        api.POST('/api/agents', {
          body: {
            name,
            systemPrompt,
            siteIds,
            trigger: built.dto,
            ...(model.trim() === '' ? {} : { model: model.trim() }),
            ...(sections.body.approvals === null ? {} : { approvals: sections.body.approvals }),
            ...(sections.body.notify === null ? {} : { notify: sections.body.notify }),
          },
        }),
      );
    } else {
      const triggerChanged = JSON.stringify(triggerOf(draftOf(agent.trigger))) !== JSON.stringify(built);
      const modelChanged = model.trim() !== agent.model;
      saved = await unwrap(
        api.PATCH('/api/agents/{id}', {
          params: { path: { id: agent.id } },
          body: {
            name,
            systemPrompt,
            siteIds,
            // Only a changed trigger is sent: it re-checks the tier and rewrites the schedule.
            ...(triggerChanged ? { trigger: built.dto } : {}),
            // Emptied: back to the service's default model.
            ...(modelChanged ? { model: model.trim() === '' ? null : model.trim() } : {}),
            // Only what changed: a new address keeps the secret; removing notifications drops it.
            ...changedPolicy(agent, sections.body),
          },
        }),
      );
    }
    if (saved.webhookSecret !== undefined) {
      handOverSecret(saved.id, saved.webhookSecret);
    }
    if (saved.notifySecret !== undefined) {
      handOverSecret(saved.id, saved.notifySecret, 'notify');
    }
    await navigate(`/agents/${saved.id}`);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run();
  };
  const toggleSite = (id: string, on: boolean) =>
    setSiteIds((ids) => (on ? [...ids, id] : ids.filter((s) => s !== id)));
  const title = agent === undefined ? 'New agent' : `Edit ${agent.name}`;
  const err = save.error;

  return (
    <section>
      <PageTitle>{title}</PageTitle>
      {agent === undefined && gates.agents !== null ? (
        <LimitNote
          gate={gates.agents}
          what="agents"
          remedy={<>Delete an agent you no longer need, or change plans. </>}
        />
      ) : null}
      <form onSubmit={submit} noValidate>
        <Field label="Name" error={err?.fieldMessage('name')}>
          {(p) => <input {...p} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field
          label="System prompt"
          hint="The agent's default instructions for every run."
          error={err?.fieldMessage('systemPrompt')}
        >
          {(p) => (
            <textarea {...p} required rows={6} value={systemPrompt} onChange={(e) => setSystemPrompt(e.target.value)} />
          )}
        </Field>
        <Field label="Model" hint="Empty: the service's default model." error={err?.fieldMessage('model')}>
          {(p) => (
            <input {...p} maxLength={100} value={model} spellCheck={false} onChange={(e) => setModel(e.target.value)} />
          )}
        </Field>

        <fieldset
          aria-describedby={err?.fieldMessage('siteIds') === undefined ? 'sites-hint' : 'sites-hint sites-error'}
        >
          <legend>Sites and their tools</legend>
          <small className="hint" id="sites-hint">
            The agent may call every tool of the sites chosen here, with the credential stored in the vault.
          </small>
          {sites === undefined ? (
            sitesError ? (
              <p className="field-error">Could not load your sites.</p>
            ) : (
              <Busy label="Loading your sites…" />
            )
          ) : sites.length === 0 ? (
            <p>
              Your vault has no sites yet. <Link to="/vault">Add one in the vault</Link>; an agent without sites can
              still answer with the model alone.
            </p>
          ) : (
            <ul className="plain">
              {sites.map((s) => (
                <li key={s.id} className="check">
                  <input
                    type="checkbox"
                    id={`site-${s.id}`}
                    checked={siteIds.includes(s.id)}
                    onChange={(e) => toggleSite(s.id, e.target.checked)}
                    aria-describedby={`site-${s.id}-tools`}
                  />
                  <label htmlFor={`site-${s.id}`}>{s.name}</label>
                  <small className="hint" id={`site-${s.id}-tools`}>
                    {s.tools.length === 0 ? 'no tools' : `tools: ${s.tools.map((t) => t.name).join(', ')}`}
                    {s.credential.status === 'reauth_required' ? ' (needs to be connected again)' : ''}
                  </small>
                </li>
              ))}
            </ul>
          )}
          {siteIds
            .filter((id) => sites !== undefined && !sites.some((s) => s.id === id))
            .map((id) => (
              <p key={id} className="notice">
                A chosen site is no longer in this vault (it was removed, or moved into a workspace).{' '}
                <button type="button" className="secondary" onClick={() => toggleSite(id, false)}>
                  Uncheck it
                </button>
              </p>
            ))}
          {err?.fieldMessage('siteIds') === undefined ? null : (
            <p className="field-error" id="sites-error">
              A chosen site is not in this vault: uncheck it, or add it to the <Link to="/vault">vault</Link> first.
            </p>
          )}
        </fieldset>

        <TriggerFields draft={trigger} onChange={setTrigger} error={err} gates={gates.triggers} />
        <PolicyFields draft={policy} onChange={setPolicy} error={err} />

        {localProblem === undefined ? null : (
          <p className="field-error" role="alert">
            {localProblem}
          </p>
        )}
        {err !== undefined && err.code !== 'TIER_REQUIRED' ? (
          <ErrorNote error={err} title="Could not save the agent" fields={AGENT_FIELDS} />
        ) : null}
        {err?.code === 'AGENT_LIMIT_REACHED' || err?.code === 'SUBSCRIPTION_PAST_DUE' ? (
          <p>
            <Link to="/billing">See your plan</Link>
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={save.busy || (agent === undefined && gates.agents !== null)}>
            {save.busy ? 'Saving…' : agent === undefined ? 'Create agent' : 'Save changes'}
          </button>
          <Link className="button secondary" to={agent === undefined ? '/agents' : `/agents/${agent.id}`}>
            Cancel
          </Link>
        </div>
      </form>
    </section>
  );
}
