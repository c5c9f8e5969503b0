import type { WorkflowStartOptions } from '@temporalio/client';
import type { Settings } from '../config/settings.js';
import { SEARCH_ATTRIBUTES, workflowIds } from '../../workflows/contracts.js';

/**
 * How the agent's queue workflow is started: by the first request that finds none (update-with-start,
 * signal-with-start), or when its schedule is set (one workflow per agent, found by its id and search
 * attributes).
 */
export function agentQueueStart(
  agent: { id: string; userId: string; name: string },
  settings: Pick<Settings, 'temporalTaskQueue' | 'agentQueueExecutionSeconds'>,
): WorkflowStartOptions {
  return {
    workflowId: workflowIds.agent(agent.id),
    taskQueue: settings.temporalTaskQueue,
    args: [{ agentId: agent.id, executionSeconds: settings.agentQueueExecutionSeconds, archiveAfterHandover: true }],
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.agentId, value: agent.id },
      { key: SEARCH_ATTRIBUTES.userId, value: agent.userId },
    ],
    memo: { agentName: agent.name },
    staticSummary: `Run queue of agent ${agent.name}`,
  };
}
