/** Moving one of the user's own agents (and its runs) into one of their Team workspaces. */
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field } from '../../components/ui';
import { useSession } from '../../session/session';
import { type AgentDetail, ConfirmButton } from './parts';

export function SharePanel({ agent }: { agent: AgentDetail }) {
  const { workspaceId, workspaces, switchWorkspace } = useSession();
  const navigate = useNavigate();
  const [target, setTarget] = useState(workspaces[0]?.id ?? '');
  const share = useAction(async () => {
    // The target workspace is named in this request only; the console then acts in it.
    await unwrap(
      api.POST('/api/agents/{id}/share', {
        params: { path: { id: agent.id }, header: { 'X-Workspace-Id': target } },
      }),
    );
    switchWorkspace(target);
    await navigate(`/agents/${agent.id}`);
  });
  // Only the user's own agents move (acting in a workspace, the agent is already shared).
  if (workspaceId !== null || workspaces.length === 0) {
    return null;
  }
  const chosen = workspaces.find((w) => w.id === target);
  return (
    <section className="panel" aria-labelledby="share-heading">
      <h2 id="share-heading">Move to a workspace</h2>
      <p className="hint">Its members then see the agent and its runs; its sites must be in that workspace too.</p>
      <Field label="Workspace">
        {(p) => (
          <select {...p} value={target} onChange={(e) => setTarget(e.target.value)}>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        )}
      </Field>
      <ConfirmButton
        label="Move agent"
        question={`Move ${agent.name} and its runs into ${chosen?.name ?? 'the workspace'}?`}
        confirmLabel="Move it"
        danger={false}
        busy={share.busy}
        onConfirm={() => void share.run()}
      />
      <ErrorNote error={share.error} title="Could not move the agent" />
    </section>
  );
}
