import { useState } from 'react';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field } from '../../components/ui';
import { useSession } from '../../session/session';
import { ConfirmButton } from '../agents/parts';
import type { Site } from './connection';
import { canBringSites, moveConsequences, shareSite } from './sharing';

/**
 * On a site of the user's own vault: move it into one of their workspaces (where they are owner or
 * admin), so that the workspace's agents and chats can use it. The console then acts in that workspace.
 */
export function ShareSite({ site }: { site: Site }) {
  const { workspaceId, workspaces, switchWorkspace } = useSession();
  const allowed = workspaces.filter(canBringSites);
  const [target, setTarget] = useState(allowed[0]?.id ?? '');
  const move = useAction(async (to: string) => {
    await shareSite(site.id, to);
    switchWorkspace(to);
  });
  // A workspace's site is already shared; a user without workspaces has nowhere to move it.
  if (workspaceId !== null || workspaces.length === 0) {
    return null;
  }
  const chosen = allowed.find((w) => w.id === target) ?? allowed[0];
  return (
    <section className="panel" aria-labelledby="share-site-heading">
      <h2 id="share-site-heading">Move to a workspace</h2>
      {chosen === undefined ? (
        <p>
          Only a workspace&apos;s owner and admins can bring a site into it, and you are{' '}
          {workspaces.map((w) => `a ${w.role} of ${w.name}`).join(', ')}.
        </p>
      ) : (
        <>
          <p className="hint">{moveConsequences(site.name, chosen.name)}</p>
          <Field label="Workspace to move it to">
            {(p) => (
              <select {...p} value={chosen.id} onChange={(e) => setTarget(e.target.value)}>
                {allowed.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.role})
                  </option>
                ))}
              </select>
            )}
          </Field>
          <ConfirmButton
            label={`Move ${site.name}`}
            question={`Move ${site.name} into ${chosen.name}?`}
            confirmLabel="Move it"
            danger={false}
            busy={move.busy}
            onConfirm={() => void move.run(chosen.id)}
          />
          <ErrorNote
            error={move.error}
            title={
              move.error?.fieldMessage('url') === undefined
                ? 'Could not move the site'
                : `${chosen.name} already has ${site.name}`
            }
          />
        </>
      )}
    </section>
  );
}
