import { type FormEvent, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field } from '../../components/ui';

type Billing = Schemas['BillingResponseDto'];
type Tier = Schemas['Tier'];

/** Every tier, lowest first, with what it adds (the limits of each are in src/billing/tiers.ts). */
const TIERS = {
  free: 'Free: 3 sites, 3 agents, manual runs',
  pro: 'Pro ($20/month): 10 sites, 10 agents, scheduled agents',
  harness: 'Harness ($50/month): 25 sites, 50 agents, scheduled and webhook agents',
  team: 'Team ($100/month): 100 sites, 200 agents, 5 workspaces of 25 members',
} satisfies Record<Tier, string>;

const TIER_NAMES = Object.keys(TIERS) as Tier[];

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

/** Choosing a tier: paid tiers are charged now to the card on file (and a past-due subscription is paid). */
export function Subscription({ billing, onChange }: { billing: Billing; onChange: () => Promise<void> }) {
  const [tier, setTier] = useState<Tier>(billing.tier);
  const [changedTo, setChangedTo] = useState<Tier>();
  const change = useAction(async () => {
    const answer = await unwrap(api.POST('/api/billing/subscription', { body: { tier } }));
    await onChange();
    setChangedTo(answer.tier);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setChangedTo(undefined);
    void change.run();
  };
  // Past due: the open invoice is paid by asking for the same tier again.
  const [paid, setPaid] = useState<Billing['subscriptionStatus']>();
  const pay = useAction(async () => {
    setPaid(undefined);
    const answer = await unwrap(api.POST('/api/billing/subscription', { body: { tier: billing.tier } }));
    await onChange();
    setPaid(answer.subscriptionStatus);
  });
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
      <form onSubmit={submit}>
        <Field
          label="Tier"
          error={change.error?.fieldMessage('tier')}
          hint="A paid tier is charged to your payment method now."
        >
          {(p) => (
            <select {...p} value={tier} onChange={(e) => setTier(e.target.value as Tier)}>
              {TIER_NAMES.map((name) => (
                <option key={name} value={name}>
                  {TIERS[name]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorNote error={change.error} title="Could not change the subscription" fields={['tier']} />
        {changedTo === undefined ? null : (
          <p className="notice" role="status">
            You are now on {changedTo}.
          </p>
        )}
        <button type="submit" disabled={change.busy}>
          {change.busy ? 'Changing…' : 'Change subscription'}
        </button>
      </form>
    </section>
  );
}
