/** The sites an agent uses that a workspace lacks, in words, with what the user can do about each. */
import { Link } from 'react-router';
import { useAction } from '../../api/hooks';
import { ErrorNote } from '../../components/ui';
import type { Workspace } from '../../session/session';
import type { Site } from '../vault/connection';
import { canBringSites, moveConsequences, shareSite } from '../vault/sharing';
import { ConfirmButton } from './parts';

/** The agent's site ids that `theirs` (the workspace's sites) does not hold. */
export function missingFrom(siteIds: string[], theirs: Site[]): string[] {
  return siteIds.filter((id) => !theirs.some((s) => s.id === id));
}

export function MissingSites({
  agentId,
  missing,
  own,
  theirs,
  workspace,
  onMoved,
}: {
  agentId: string;
  /** Ids of the agent's sites the workspace lacks. */
  missing: string[];
  /** The user's own sites. */
  own: Site[];
  /** The workspace's sites. */
  theirs: Site[];
  workspace: Workspace;
  /** After a site was moved into the workspace: read both vaults again. */
  onMoved: () => Promise<void>;
}) {
  return (
    <>
      <p>
        {workspace.name} does not have {missing.length === 1 ? 'a site' : `${missing.length} sites`} this agent uses;
        the agent can move once it has them:
      </p>
      <ul>
        {missing.map((id) => (
          <MissingSite
            key={id}
            agentId={agentId}
            site={own.find((s) => s.id === id)}
            theirs={theirs}
            workspace={workspace}
            onMoved={onMoved}
          />
        ))}
      </ul>
    </>
  );
}

function MissingSite({
  agentId,
  site,
  theirs,
  workspace,
  onMoved,
}: {
  agentId: string;
  site: Site | undefined;
  theirs: Site[];
  workspace: Workspace;
  onMoved: () => Promise<void>;
}) {
  const move = useAction(async (id: string) => {
    await shareSite(id, workspace.id);
    await onMoved();
  });
  const edit = <Link to={`/agents/${agentId}/edit`}>Edit the agent</Link>;
  if (site === undefined) {
    return <li>A site this agent uses is no longer in your vault: {edit} and uncheck it.</li>;
  }
  if (theirs.some((s) => s.url === site.url)) {
    return (
      <li>
        <strong>{site.name}</strong>: {workspace.name} has its own {site.name}, and this agent uses yours. {edit} to
        uncheck {site.name}, move the agent, then choose {workspace.name}&apos;s {site.name} for it there.
      </li>
    );
  }
  if (!canBringSites(workspace)) {
    return (
      <li>
        <strong>{site.name}</strong>: only the owner and admins of {workspace.name} can bring a site into it (you are a{' '}
        {workspace.role}). {edit} to uncheck {site.name}, or ask to be made an admin.
      </li>
    );
  }
  return (
    <li>
      <strong>{site.name}</strong> is only in your own vault.{' '}
      <ConfirmButton
        label={`Move ${site.name} into ${workspace.name}`}
        question={moveConsequences(site.name, workspace.name)}
        confirmLabel="Move it"
        danger={false}
        busy={move.busy}
        onConfirm={() => void move.run(site.id)}
      />
      <ErrorNote error={move.error} title={`Could not move ${site.name}`} />
    </li>
  );
}
