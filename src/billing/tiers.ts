import { AppError } from '../common/app-error.js';
import type { UserEntity } from '../users/user.entity.js';
import type { Tier } from '../users/user-fields.js';

export interface TierLimits {
  /** Sites a user may keep in the vault (VAULT_LIMIT_REACHED past it). */
  vaultSites: number;
  /** Agents a user may have (AGENT_LIMIT_REACHED past it). */
  agents: number;
  /** Whether agents may run on a cron schedule (TIER_REQUIRED otherwise). */
  scheduledAgents: boolean;
  /** Whether agents may be triggered by webhooks: the specification puts this at `harness` and above. */
  webhookAgents: boolean;
  /** Team workspaces a user may own (0: none; FEATURE_LIMIT_REACHED past it). */
  workspaces: number;
  /** Members a workspace of this owner may have (FEATURE_LIMIT_REACHED past it). */
  workspaceMembers: number;
  /** Monthly price, in cents. */
  priceCents: number;
}

/** The one table of tier limits; every limit check reads it. */
export const TIER_LIMITS: Record<Tier, TierLimits> = {
  free: {
    vaultSites: 3,
    agents: 3,
    scheduledAgents: false,
    webhookAgents: false,
    workspaces: 0,
    workspaceMembers: 0,
    priceCents: 0,
  },
  pro: {
    vaultSites: 10,
    agents: 10,
    scheduledAgents: true,
    webhookAgents: false,
    workspaces: 0,
    workspaceMembers: 0,
    priceCents: 2000,
  },
  harness: {
    vaultSites: 25,
    agents: 50,
    scheduledAgents: true,
    webhookAgents: true,
    workspaces: 0,
    workspaceMembers: 0,
    priceCents: 5000,
  },
  team: {
    vaultSites: 100,
    agents: 200,
    scheduledAgents: true,
    webhookAgents: true,
    workspaces: 5,
    workspaceMembers: 25,
    priceCents: 10000,
  },
};

/** Cents per purchased credit. */
export const CREDIT_PRICE_CENTS = 1;

/** The limits in force: a past-due subscription falls back to the free tier's. */
export function limitsOf(user: Pick<UserEntity, 'tier' | 'subscriptionStatus'>): TierLimits {
  return user.subscriptionStatus === 'past_due' ? TIER_LIMITS.free : TIER_LIMITS[user.tier];
}

/**
 * Refuses a feature above the free tier: SUBSCRIPTION_PAST_DUE while the subscription is overdue
 * (the tier has it, the payment is missing), TIER_REQUIRED when the tier lacks it.
 */
export function requireFeature(
  user: Pick<UserEntity, 'tier' | 'subscriptionStatus'>,
  has: (limits: TierLimits) => boolean,
  what: string,
): void {
  if (has(limitsOf(user))) {
    return;
  }
  if (user.subscriptionStatus === 'past_due' && has(TIER_LIMITS[user.tier])) {
    throw new AppError(
      'SUBSCRIPTION_PAST_DUE',
      `The subscription payment is overdue: ${what} is paused until it is paid`,
    );
  }
  throw new AppError('TIER_REQUIRED', `${what} needs a higher tier than ${user.tier}`);
}

/** Refuses going past a count limit; past-due subscriptions count against the free tier's limits. */
export function requireBelow(
  user: Pick<UserEntity, 'tier' | 'subscriptionStatus'>,
  count: number,
  limitOf: (limits: TierLimits) => number,
  code: 'VAULT_LIMIT_REACHED' | 'AGENT_LIMIT_REACHED' | 'FEATURE_LIMIT_REACHED',
  what: string,
): void {
  const limit = limitOf(limitsOf(user));
  if (count < limit) {
    return;
  }
  if (user.subscriptionStatus === 'past_due' && count < limitOf(TIER_LIMITS[user.tier])) {
    throw new AppError(
      'SUBSCRIPTION_PAST_DUE',
      `The subscription payment is overdue: more ${what} are paused until it is paid`,
    );
  }
  throw new AppError(code, `The ${user.tier} tier allows ${limit} ${what}`);
}
