import type { AgentEntity } from '../../agents/agent.entity.js';
import type { AgentsService } from '../../agents/agents.service.js';
import type { UserEntity } from '../../users/user.entity.js';

type WebhookTarget = NonNullable<Awaited<ReturnType<AgentsService['webhookTarget']>>>;

/** The agents a webhook can name, in memory: the one read the webhook intake makes of the agents feature. */
export class FakeAgentsService implements Pick<AgentsService, 'webhookTarget'> {
  readonly targets = new Map<string, WebhookTarget>();

  add(agent: AgentEntity, tierOwner: Pick<UserEntity, 'tier' | 'subscriptionStatus'>, payerCredits: number): void {
    this.targets.set(agent.id, { agent, tierOwner: tierOwner as UserEntity, payerCredits });
  }

  async webhookTarget(agentId: string): Promise<WebhookTarget | null> {
    return this.targets.get(agentId) ?? null;
  }
}
