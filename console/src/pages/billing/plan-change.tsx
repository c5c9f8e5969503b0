/**
 * The confirmation asked before a change of plan: what it costs and when it is charged (which
 * depends on who takes payments here), what becomes of the credit balance, and, going down, what
 * the user loses. The true answers are in src/billing (BillingService.changeSubscription and the
 * providers) and docs/billing.md.
 */
import { useEffect, useRef } from 'react';
import { type ApiError } from '../../api/client';
import { ErrorNote, formatCredits } from '../../components/ui';
import { type Billing, formatPrice, type Limits, type Plan, type Tier, TIER_LABELS } from './gates';

/** One line per thing a lower plan takes away ("Agents: 50 → 10"). */
export function losses(from: Limits, to: Limits): string[] {
  const lost: string[] = [];
  const count = (what: string, a: number, b: number) => {
    if (b < a) {
      lost.push(`${what}: ${a} → ${b === 0 ? 'none' : b}`);
    }
  };
  count('Sites in your vault', from.vaultSites, to.vaultSites);
  count('Agents', from.agents, to.agents);
  if (from.scheduledAgents && !to.scheduledAgents) {
    lost.push('Scheduled agents');
  }
  if (from.webhookAgents && !to.webhookAgents) {
    lost.push('Webhook agents');
  }
  count('Workspaces you own', from.workspaces, to.workspaces);
  count('Members of each workspace', from.workspaceMembers, to.workspaceMembers);
  return lost;
}

/** When and how much is charged, in words. */
function chargeText(billing: Billing, from: Plan, to: Plan): string {
  const card = billing.paymentMethod;
  const price = `${formatPrice(to.priceCents)} a month`;
  if (to.priceCents === 0) {
    return from.priceCents === 0
      ? 'The Free plan costs nothing.'
      : `The Free plan costs nothing: your ${TIER_LABELS[from.tier]} subscription ends now and nothing more is charged (what was paid is not refunded).`;
  }
  const onCard = card === null ? '' : ` to your ${card.brand} card ending in ${card.last4}`;
  switch (billing.provider) {
    case 'none':
      return `The ${TIER_LABELS[to.tier]} plan costs ${price}, but payments are off on this server: it cannot be bought here.`;
    case 'test':
      return `The ${TIER_LABELS[to.tier]} plan costs ${price}: ${formatPrice(to.priceCents)} is charged now${onCard}. (This server’s test payment provider charges a plan’s price once, when it is chosen.)`;
    case 'stripe':
      return from.priceCents === 0
        ? `The ${TIER_LABELS[to.tier]} plan costs ${price}: the first month is charged now${onCard}, then the same each month until you change plans.`
        : `The ${TIER_LABELS[to.tier]} plan costs ${price}. The difference with your ${TIER_LABELS[from.tier]} plan for the rest of the current month is settled now${onCard} (charged if the new plan costs more, credited to your next invoices if it costs less); then ${price}.`;
  }
}

/** Why the change cannot be confirmed yet, if it cannot. */
export function blockedBecause(billing: Billing, to: Plan): string | undefined {
  if (to.priceCents === 0) {
    return undefined;
  }
  if (billing.provider === 'none') {
    return 'Payments are off on this server.';
  }
  return billing.paymentMethod === null ? 'Add a payment method above first: the plan is charged to it.' : undefined;
}

export function ConfirmPlanChange({
  billing,
  to,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  billing: Billing;
  to: Tier;
  busy: boolean;
  error: ApiError | undefined;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const from = billing.plans.find((p) => p.tier === billing.tier);
  const target = billing.plans.find((p) => p.tier === to);
  if (from === undefined || target === undefined) {
    return null;
  }
  const goingDown = billing.plans.indexOf(target) < billing.plans.indexOf(from);
  const lost = goingDown ? losses(from, target) : [];
  const blocked = blockedBecause(billing, target);
  return (
    <div className="confirm panel" role="group" aria-labelledby="confirm-plan-heading">
      <h3 id="confirm-plan-heading" ref={heading} tabIndex={-1}>
        Change from {TIER_LABELS[from.tier]} to {TIER_LABELS[target.tier]}?
      </h3>
      <p data-testid="plan-charge">{chargeText(billing, from, target)}</p>
      <p data-testid="plan-balance">
        Your balance of {formatCredits(billing.credits)} stays as it is: plans include no credits, and changing plans
        neither adds nor removes any. Credits are bought separately, under Buy credits.
      </p>
      {lost.length === 0 ? null : (
        <div data-testid="plan-losses">
          <p>
            <strong>You lose:</strong>
          </p>
          <ul>
            {lost.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
          <p>
            Sites and agents beyond the new limits stay, but no more can be added; scheduled and webhook agents the plan
            no longer includes stop running (each run fails) until you change back.
          </p>
        </div>
      )}
      {blocked === undefined ? null : <p className="field-error">{blocked}</p>}
      <ErrorNote error={error} title="Could not change the subscription" />
      <div className="actions">
        <button type="button" disabled={busy || blocked !== undefined} onClick={onConfirm}>
          {busy ? 'Changing…' : `Confirm the change to ${TIER_LABELS[target.tier]}`}
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
