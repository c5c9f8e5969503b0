/** Moving one of the user's own agents (and its runs) into one of their Team workspaces. */
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, Field } from '../../components/ui';
import { useSession } from '../../session/session';
import { workspaceSites } from '../vault/sharing';
import { missingFrom, MissingSites } from './missing-sites';
import { type AgentDetail, ConfirmButton } from './parts';

export function SharePanel({ agent }: { agent: AgentDetail }) {
  const { workspaceId, workspaces, switchWorkspace } = useSession();
  const navigate = useNavigate();
  const [picked, setPicked] = useState(workspaces[0]?.id ?? '');
  // The session's workspaces may arrive after this panel first rendered (its state then began empty):
  // until the user picks one that is there, the first.
  const target = workspaces.some((w) => w.id === picked) ? picked : (workspaces[0]?.id ?? '');
  const shown = workspaceId === null && workspaces.some((w) => w.id === target);
  const usesSites = agent.siteIds.length > 0;
  // The agent's sites are in the user's own vault; which of them the chosen workspace lacks, by id
  // (a site moved into a workspace keeps its id).
  const own = useLoad(
    async () =>
      shown && usesSites
        ? (await unwrap(api.GET('/api/vault/sites', { params: { query: { limit: 200 } } }))).items
        : [],
    [shown, usesSites],
  );
  const theirs = useLoad(async () => (shown && usesSites ? workspaceSites(target) : []), [shown, usesSites, target]);
  const reloadSites = async () => {
    await Promise.all([own.reload(), theirs.reload()]);
  };
  const share = useAction(async () => {
    // The target workspace is named in this request only; the console then acts in it.
    await unwrap(
      api.POST('/api/agents/{id}/share', {
        params: { path: { id: agent.id }, header: { 'X-Workspace-Id': target } },
      }),
    ).catch(async (err: unknown) => {
      await reloadSites();
      throw err;
    });
    switchWorkspace(target);
    await navigate(`/agents/${agent.id}`);
  });
  // Only the user's own agents move (acting in a workspace, the agent is already shared).
  if (workspaceId !== null || workspaces.length === 0) {
    return null;
  }
  const chosen = workspaces.find((w) => w.id === target);
  const missing = theirs.data === undefined ? [] : missingFrom(agent.siteIds, theirs.data);
  // Refused because the workspace lacks a site: said in the same words as before the move.
  const refusedForSites = share.error?.code === 'VALIDATION_ERROR' && share.error.fieldMessage('siteIds') !== undefined;
  const sites =
    chosen === undefined || missing.length === 0 ? null : (
      <MissingSites
        agentId={agent.id}
        missing={missing}
        own={own.data ?? []}
        theirs={theirs.data ?? []}
        workspace={chosen}
        onMoved={reloadSites}
      />
    );
  return (
    <section className="panel" aria-labelledby="share-heading">
      <h2 id="share-heading">Move to a workspace</h2>
      <p className="hint">Its members then see the agent and its runs; its sites must be in that workspace too.</p>
      <Field label="Workspace">
        {(p) => (
          <select
            {...p}
            value={target}
            onChange={(e) => {
              share.clearError();
              setPicked(e.target.value);
            }}
          >
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        )}
      </Field>
      {theirs.loading || own.loading ? <Busy label="Checking the workspace's sites…" /> : null}
      <ErrorNote error={theirs.error ?? own.error} title="Could not read the workspace's sites" />
      {refusedForSites ? (
        <div className="error-note" role="alert">
          <strong>The agent was not moved.</strong> {sites ?? 'The workspace has its sites now: move it again.'}
        </div>
      ) : (
        sites
      )}
      <ConfirmButton
        label="Move agent"
        question={`Move ${agent.name} and its runs into ${chosen?.name ?? 'the workspace'}?`}
        confirmLabel="Move it"
        danger={false}
        busy={share.busy}
        onConfirm={() => void share.run()}
      />
      {refusedForSites ? null : <ErrorNote error={share.error} title="Could not move the agent" />}
    </section>
  );
}
