/**
 * What the user's plan allows, said before a form is filled: which tier a feature needs, and when a
 * count limit (agents, vault sites, workspaces) is reached. Read from GET /api/billing: `limits` (in
 * force: a past-due subscription has the free tier's) and `plans` (every tier, lowest first).
 */
import { type ReactNode } from 'react';
import { Link } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { type Loaded, useLoad } from '../../api/hooks';

export type Billing = Schemas['BillingResponseDto'];
export type Plan = Schemas['TierPlanDto'];
export type Tier = Schemas['Tier'];
export type Limits = Billing['limits'];

/** Tier names as people read them. */
export const TIER_LABELS = { free: 'Free', pro: 'Pro', harness: 'Harness', team: 'Team' } satisfies Record<
  Tier,
  string
>;

export function formatPrice(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

/** The user's own plan (credits and tiers are the user's, whichever workspace is active). */
export function useBilling(): Loaded<Billing> {
  return useLoad(() => unwrap(api.GET('/api/billing')), []);
}

/** Why a feature is not available now, or null when it is. */
export type Gate = { kind: 'tier'; needs: Plan | undefined; current: Tier } | { kind: 'past_due'; current: Tier };

/** Whether the plan in force has a feature; if not, the lowest tier that has it (or the overdue payment). */
export function featureGate(billing: Billing | undefined, has: (limits: Limits) => boolean): Gate | null {
  if (billing === undefined || has(billing.limits)) {
    return null;
  }
  const own = billing.plans.find((p) => p.tier === billing.tier);
  if (billing.subscriptionStatus === 'past_due' && own !== undefined && has(own)) {
    return { kind: 'past_due', current: billing.tier };
  }
  return { kind: 'tier', needs: billing.plans.find((p) => has(p)), current: billing.tier };
}

/** A count limit reached: the limit in force, and the lowest tier that allows more. */
export interface CountGate {
  limit: number;
  current: Tier;
  pastDue: boolean;
  /** The lowest tier that allows more, and how many it allows. */
  more: { plan: Plan; limit: number } | undefined;
}

export function countGate(
  billing: Billing | undefined,
  count: number | undefined,
  limitOf: (limits: Limits) => number,
): CountGate | null {
  if (billing === undefined || count === undefined) {
    return null;
  }
  const limit = limitOf(billing.limits);
  if (count < limit) {
    return null;
  }
  const pastDue = billing.subscriptionStatus === 'past_due';
  const own = billing.plans.find((p) => p.tier === billing.tier);
  const more = billing.plans.find((p) => limitOf(p) > count);
  return {
    limit,
    current: billing.tier,
    pastDue: pastDue && own !== undefined && count < limitOf(own),
    more: more === undefined ? undefined : { plan: more, limit: limitOf(more) },
  };
}

function planName(plan: Plan): string {
  return `${TIER_LABELS[plan.tier]} plan (${formatPrice(plan.priceCents)} a month)`;
}

/** "Needs the Harness plan ($50.00 a month) or higher; you are on Free. See the plans" */
export function GateNote({ gate, id }: { gate: Gate; id?: string }) {
  if (gate.kind === 'past_due') {
    return (
      <span id={id} className="gate-note">
        Paused while your subscription payment is overdue. <Link to="/billing">Pay it on Plan &amp; credits</Link>.
      </span>
    );
  }
  return (
    <span id={id} className="gate-note">
      {gate.needs === undefined ? 'Not included in any plan' : `Needs the ${planName(gate.needs)} or higher`}; you are
      on {TIER_LABELS[gate.current]}. <Link to="/billing">See the plans</Link>.
    </span>
  );
}

/**
 * A count limit reached, said before the form: "You have 3 agents, all that your Free plan allows."
 * `what` is the plural noun (agents, sites in your vault, workspaces you own); `remedy` what else helps.
 */
export function LimitNote({ gate, what, remedy }: { gate: CountGate; what: string; remedy?: ReactNode }) {
  return (
    <div className="notice gate-note" role="note">
      {gate.limit === 0 ? (
        <>
          Your {TIER_LABELS[gate.current]} plan does not include {what}.{' '}
        </>
      ) : (
        <>
          You have {gate.limit} {what}, all that your {TIER_LABELS[gate.current]} plan allows
          {gate.pastDue ? ' while its payment is overdue' : ''}.{' '}
        </>
      )}
      {remedy}
      {gate.pastDue ? (
        <Link to="/billing">Pay the subscription</Link>
      ) : gate.more === undefined ? null : (
        <>
          The {planName(gate.more.plan)} allows {gate.more.limit}: <Link to="/billing">see the plans</Link>.
        </>
      )}
    </div>
  );
}
