import type { Counter } from 'prom-client';
import type { AgentEntity } from '../../agents/agent.entity.js';
import type { UserEntity } from '../../users/user.entity.js';
import type { Scope } from '../../workspaces/scope.js';

/** An agent row as the services receive it (defaults: a manual agent of `user-1`, personal). */
export function agentFixture(fields: Partial<AgentEntity> & Pick<AgentEntity, 'id'>): AgentEntity {
  return {
    userId: 'user-1',
    workspaceId: null,
    name: 'Agent',
    systemPrompt: 'Be brief.',
    siteIds: [],
    model: null,
    triggerType: 'manual',
    cron: null,
    timezone: null,
    allowActionOverride: false,
    webhookSchema: null,
    webhookSecretHash: null,
    approvalScopes: null,
    approvalTimeoutSeconds: null,
    notifyUrl: null,
    notifyEvents: null,
    notifySecret: null,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-01-01T00:00:00Z'),
    ...fields,
  };
}

/** A personal scope (no workspace) of a user with just an id. */
export function personalScope(userId: string): Scope {
  return { user: { id: userId } as UserEntity, workspace: null };
}

/** A workspace scope of a user with the given role. */
export function workspaceScope(
  userId: string,
  workspaceId: string,
  role: 'owner' | 'admin' | 'member' | 'viewer',
): Scope {
  return {
    user: { id: userId } as UserEntity,
    workspace: { id: workspaceId, role, owner: { id: 'owner-1' } as UserEntity },
  };
}

/** The value of a prom-client counter for one label set (0 when never incremented). */
export async function counted(counter: Counter, labels: Record<string, string>): Promise<number> {
  const { values } = await counter.get();
  const match = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value ?? 0;
}
