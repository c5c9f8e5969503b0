import { type FormEvent, useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field } from '../../components/ui';
import { type Billing, formatPrice, type Plan, type Tier, TIER_LABELS } from './gates';
import { ConfirmPlanChange } from './plan-change';

/** A tier in one line, from the plans the API lists: "Pro ($20.00/month): 10 sites, 10 agents, scheduled agents". */
function planLine(plan: Plan): string {
  const features = [
    plan.scheduledAgents ? (plan.webhookAgents ? 'scheduled and webhook agents' : 'scheduled agents') : 'manual runs',
    ...(plan.workspaces > 0 ? [`${plan.workspaces} workspaces of ${plan.workspaceMembers} members`] : []),
  ];
  return `${TIER_LABELS[plan.tier]} (${formatPrice(plan.priceCents)}/month): ${plan.vaultSites} sites, ${plan.agents} agents, ${features.join(', ')}`;
}

function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}

/** The limits in force (a past-due subscription has the free tier's). */
export function LimitsTable({ limits }: { limits: Billing['limits'] }) {
  return (
    <table aria-label="Limits in force">
      <caption className="visually-hidden">Limits in force</caption>
      <tbody>
        <tr>
          <th scope="row">Vault sites</th>
          <td>{limits.vaultSites}</td>
        </tr>
        <tr>
          <th scope="row">Agents</th>
          <td>{limits.agents}</td>
        </tr>
        <tr>
          <th scope="row">Scheduled agents</th>
          <td>{yesNo(limits.scheduledAgents)}</td>
        </tr>
        <tr>
          <th scope="row">Webhook agents</th>
          <td>{yesNo(limits.webhookAgents)}</td>
        </tr>
        <tr>
          <th scope="row">Workspaces (members each)</th>
          <td>{limits.workspaces === 0 ? '—' : `${limits.workspaces} (${limits.workspaceMembers})`}</td>
        </tr>
        <tr>
          <th scope="row">Price per month</th>
          <td>${(limits.priceCents / 100).toFixed(2)}</td>
        </tr>
      </tbody>
    </table>
  );
}

/**
 * Choosing a tier: the change is confirmed first, with its price, when it is charged, what becomes of
 * the balance and, going down, what is lost. A past-due subscription is paid with "Pay now".
 * `cardVersion` counts the payment methods stored: a new one clears the errors it may have fixed.
 */
export function Subscription({
  billing,
  cardVersion,
  onChange,
}: {
  billing: Billing;
  cardVersion: number;
  onChange: () => Promise<void>;
}) {
  const [tier, setTier] = useState<Tier>(billing.tier);
  const [reviewing, setReviewing] = useState(false);
  const [changedTo, setChangedTo] = useState<Tier>();
  const change = useAction(async () => {
    const answer = await unwrap(api.POST('/api/billing/subscription', { body: { tier } }));
    await onChange();
    setReviewing(false);
    setChangedTo(answer.tier);
  });
  const review = (e: FormEvent) => {
    e.preventDefault();
    setChangedTo(undefined);
    change.clearError();
    setReviewing(true);
  };
  // Past due: the open invoice is paid by asking for the same tier again.
  const [paid, setPaid] = useState<Billing['subscriptionStatus']>();
  const pay = useAction(async () => {
    setPaid(undefined);
    const answer = await unwrap(api.POST('/api/billing/subscription', { body: { tier: billing.tier } }));
    await onChange();
    setPaid(answer.subscriptionStatus);
  });
  const { clearError: clearChange } = change;
  const { clearError: clearPay } = pay;
  useEffect(() => {
    // A payment method stored since: "add a payment method first" or a declined card no longer holds.
    clearChange();
    clearPay();
  }, [cardVersion, clearChange, clearPay]);
  return (
    <section aria-labelledby="plan-heading" className="panel">
      <h2 id="plan-heading">Subscription</h2>
      <p>
        You are on <strong>{billing.tier}</strong>; the subscription is{' '}
        <strong>{billing.subscriptionStatus.replace('_', ' ')}</strong>.
      </p>
      {billing.subscriptionStatus === 'past_due' ? (
        <div className="past-due">
          <p>
            The last payment of your {billing.tier} subscription failed: the free tier’s limits apply until it is paid.
            Paying charges your payment method now.
          </p>
          <ErrorNote error={pay.error} title="Could not pay the subscription" />
          <button type="button" disabled={pay.busy} onClick={() => void pay.run()}>
            {pay.busy ? 'Paying…' : 'Pay now'}
          </button>
        </div>
      ) : null}
      {paid === undefined ? null : (
        <p className="notice" role="status">
          Paid: the subscription is {paid.replace('_', ' ')}.
        </p>
      )}
      <form onSubmit={review}>
        <Field
          label="Tier"
          error={change.error?.fieldMessage('tier')}
          hint="You see the price, when it is charged and what changes before anything is charged."
        >
          {(p) => (
            <select
              {...p}
              value={tier}
              disabled={reviewing}
              onChange={(e) => {
                setTier(e.target.value as Tier);
                change.clearError();
              }}
            >
              {billing.plans.map((plan) => (
                <option key={plan.tier} value={plan.tier}>
                  {planLine(plan)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {changedTo === undefined ? null : (
          <p className="notice" role="status">
            You are now on {changedTo}.
          </p>
        )}
        {reviewing ? null : (
          <button type="submit" disabled={tier === billing.tier}>
            Change subscription
          </button>
        )}
      </form>
      {reviewing ? (
        <ConfirmPlanChange
          billing={billing}
          to={tier}
          busy={change.busy}
          error={change.error}
          onConfirm={() => void change.run()}
          onCancel={() => {
            setReviewing(false);
            setTier(billing.tier);
            change.clearError();
          }}
        />
      ) : null}
    </section>
  );
}
