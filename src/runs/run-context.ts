import type { AgentEntity } from '../agents/agent.entity.js';
import { APPROVAL_TIMEOUT, type RunContext } from '../../workflows/contracts.js';

/**
 * What a run's context carries of its agent's approval policy and notifications (turn 1 reads them
 * from the agent's row, so the whole run keeps the policy it started with): `approvals` only when the
 * agent lists a scope (its wait defaulting to APPROVAL_TIMEOUT.defaultSeconds), `notify` only when the
 * agent has a URL to notify (the events it chose; never the URL or the secret, which the sending
 * activity reads from the database).
 */
export function agentPoliciesOf(
  agent: Pick<AgentEntity, 'approvalScopes' | 'approvalTimeoutSeconds' | 'notifyUrl' | 'notifyEvents'>,
): Pick<RunContext, 'approvals' | 'notify'> {
  const scopes = agent.approvalScopes ?? [];
  return {
    ...(scopes.length > 0
      ? {
          approvals: {
            scopes: [...scopes],
            timeoutSeconds: agent.approvalTimeoutSeconds ?? APPROVAL_TIMEOUT.defaultSeconds,
          },
        }
      : {}),
    ...(agent.notifyUrl !== null && agent.notifyUrl !== undefined ? { notify: [...(agent.notifyEvents ?? [])] } : {}),
  };
}
