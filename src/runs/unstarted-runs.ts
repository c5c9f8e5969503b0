import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { AGENT_HANDLERS, type AgentQueueState, workflowIds } from '../../workflows/contracts.js';
import type { RunsRepository } from './runs.repository.js';

/**
 * How old a `queued` row must be before it may be a start that never reached Temporal. The API
 * writes the row, then sends its update-with-start (enqueue): a row younger than this may still have
 * its update on the way. The update's round trip takes milliseconds, and seconds under load (the soak
 * saw 14 s pending before its process was killed); two minutes is far beyond any start still in
 * flight, and a run refused for it in the meantime only waits that long once.
 */
export const UNSTARTED_RUN_AGE_MS = 2 * 60_000;

/**
 * Deletes the rows left `queued` by a start whose update never got through to the agent's queue
 * workflow (its API process died, or the call failed and the process died before deleting the row):
 * such a row is not a run (its client never got a 2xx for it), yet it would sit in the run list as
 * queued for ever and count as an open run of its agent. Only rows older than UNSTARTED_RUN_AGE_MS,
 * with no delivery id, and that the agent's queue does not hold (its query: active or queued) go. An
 * agent whose queue does not answer (no worker free) keeps its rows for the next pass. Returns the ids
 * deleted.
 */
export async function repairUnstartedRuns(
  runs: Pick<RunsRepository, 'findUnstarted' | 'deleteIfQueued'>,
  client: Pick<Client, 'workflow'>,
  limit: number,
  agentId?: string,
  now = new Date(),
): Promise<string[]> {
  const candidates = await runs.findUnstarted(new Date(now.getTime() - UNSTARTED_RUN_AGE_MS), limit, agentId);
  const byAgent = new Map<string, string[]>();
  for (const row of candidates) {
    byAgent.set(row.agentId, [...(byAgent.get(row.agentId) ?? []), row.id]);
  }
  const deleted: string[] = [];
  for (const [agent, ids] of byAgent) {
    const held = await heldRuns(client, agent);
    if (held === undefined) {
      continue;
    }
    for (const id of ids.filter((i) => !held.has(i))) {
      await runs.deleteIfQueued(id);
      deleted.push(id);
    }
  }
  return deleted;
}

/** The runs the agent's queue workflow holds (none when it is not running); undefined if it did not answer. */
async function heldRuns(client: Pick<Client, 'workflow'>, agentId: string): Promise<Set<string> | undefined> {
  try {
    const state = await client.workflow
      .getHandle(workflowIds.agent(agentId))
      .query<AgentQueueState>(AGENT_HANDLERS.agentState);
    return new Set([...(state.activeRunId === null ? [] : [state.activeRunId]), ...state.queuedRunIds]);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      return new Set();
    }
    return undefined;
  }
}
