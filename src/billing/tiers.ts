import { TIERS, type Tier } from '../users/user.entity.js';

export interface TierLimits {
  /** Sites a user may keep in the vault (VAULT_LIMIT_REACHED past it). */
  vaultSites: number;
  /** Agents a user may have (AGENT_LIMIT_REACHED past it). */
  agents: number;
  /** Whether agents may run on a cron schedule (TIER_REQUIRED otherwise). */
  scheduledAgents: boolean;
  /** Whether agents may be triggered by webhooks: the specification puts this at `harness` and above. */
  webhookAgents: boolean;
  /** Whether the user may create Team workspaces. */
  workspaces: boolean;
}

/** The one table of tier limits; every limit check reads it. */
export const TIER_LIMITS: Record<Tier, TierLimits> = {
  free: { vaultSites: 3, agents: 3, scheduledAgents: false, webhookAgents: false, workspaces: false },
  pro: { vaultSites: 10, agents: 10, scheduledAgents: true, webhookAgents: false, workspaces: false },
  harness: { vaultSites: 25, agents: 50, scheduledAgents: true, webhookAgents: true, workspaces: false },
  team: { vaultSites: 100, agents: 200, scheduledAgents: true, webhookAgents: true, workspaces: true },
};

export function tierRank(tier: Tier): number {
  return TIERS.indexOf(tier);
}

/** Whether `tier` is `minimum` or higher. */
export function tierAtLeast(tier: Tier, minimum: Tier): boolean {
  return tierRank(tier) >= tierRank(minimum);
}
