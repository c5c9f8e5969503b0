/**
 * A webhook secret travels from the save that generated it to the agent's page in memory only:
 * never in the URL or the history state (a reload or the back button would show it again).
 */
const pending = new Map<string, string>();

export function handOverSecret(agentId: string, secret: string): void {
  pending.set(agentId, secret);
}

/** The secret waiting for this agent, if any (read it, then forget it with forgetSecret). */
export function peekSecret(agentId: string): string | undefined {
  return pending.get(agentId);
}

export function forgetSecret(agentId: string): void {
  pending.delete(agentId);
}
