/**
 * A secret (the webhook's, the notifications' signing secret) travels from the save that generated it
 * to the agent's page in memory only: never in the URL or the history state (a reload or the back
 * button would show it again).
 */
export type SecretKind = 'webhook' | 'notify';

const pending = new Map<string, string>();
const keyOf = (agentId: string, kind: SecretKind) => `${kind}:${agentId}`;

export function handOverSecret(agentId: string, secret: string, kind: SecretKind = 'webhook'): void {
  pending.set(keyOf(agentId, kind), secret);
}

/** The secret waiting for this agent, if any (read it, then forget it with forgetSecret). */
export function peekSecret(agentId: string, kind: SecretKind = 'webhook'): string | undefined {
  return pending.get(keyOf(agentId, kind));
}

export function forgetSecret(agentId: string, kind: SecretKind = 'webhook'): void {
  pending.delete(keyOf(agentId, kind));
}
