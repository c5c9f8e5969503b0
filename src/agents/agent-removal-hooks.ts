import { Injectable } from '@nestjs/common';

type RemovalHook = (agentId: string) => Promise<void>;

/**
 * What must stop before an agent is deleted, registered by the features that build on agents
 * (RunsModule stops the agent's run queue). Agents cannot import those features, which import
 * agents; the hooks keep DELETE /agents/:id in this folder without a cycle.
 */
@Injectable()
export class AgentRemovalHooks {
  private readonly hooks: RemovalHook[] = [];

  register(hook: RemovalHook): void {
    this.hooks.push(hook);
  }

  /** Runs every hook in registration order; the first failure stops the deletion. */
  async beforeRemove(agentId: string): Promise<void> {
    for (const hook of this.hooks) {
      await hook(agentId);
    }
  }
}
