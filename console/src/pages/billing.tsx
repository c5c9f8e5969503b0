import { api, unwrap } from '../api/client';
import { useLoad } from '../api/hooks';
import { Busy, ErrorNote, formatCredits, PageTitle } from '../components/ui';
import { useSession } from '../session/session';
import { BuyCredits, PaymentMethod } from './billing/payments';
import { Ledger, useLedger } from './billing/ledger';
import { LimitsTable, Subscription } from './billing/plan';
import { Purchases, usePurchases } from './billing/purchases';

/**
 * Plan & credits: the tier and its limits, the balance and its ledger, the payment method, buying
 * credits (and the purchases, some pending until the provider confirms them) and changing the subscription. Credits belong to the user, whichever workspace is active.
 */
export function BillingPage() {
  const { refreshMe } = useSession();
  const billing = useLoad(() => unwrap(api.GET('/api/billing')), []);
  const ledger = useLedger();
  const purchases = usePurchases();
  /** After a payment (or a pending one confirmed): the balance, the ledger, the purchases and the header's account change. */
  const changed = async () => {
    await Promise.all([billing.reload(), ledger.reloadFirst(), purchases.showNewest(), refreshMe()]);
  };
  const data = billing.data;
  return (
    <section>
      <PageTitle>Plan &amp; credits</PageTitle>
      <ErrorNote error={billing.error} title="Could not load your plan" />
      {data === undefined ? (
        billing.loading ? (
          <Busy label="Loading your plan…" />
        ) : null
      ) : (
        <>
          <section aria-labelledby="summary-heading" className="panel">
            <h2 id="summary-heading">Summary</h2>
            <dl className="facts">
              <dt>Tier</dt>
              <dd data-testid="tier">{data.tier}</dd>
              <dt>Subscription</dt>
              <dd>
                <span className={data.subscriptionStatus === 'active' ? 'badge ok' : 'badge bad'}>
                  {data.subscriptionStatus.replace('_', ' ')}
                </span>
              </dd>
              <dt>Balance</dt>
              <dd data-testid="balance">{formatCredits(data.credits)}</dd>
            </dl>
            <LimitsTable limits={data.limits} />
          </section>
          <PaymentMethod billing={data} onChange={() => billing.reload()} />
          <BuyCredits billing={data} onBought={changed} />
          {data.provider === 'none' ? null : <Purchases purchases={purchases} onRefresh={changed} />}
          <Subscription billing={data} onChange={changed} />
        </>
      )}
      <Ledger ledger={ledger} />
    </section>
  );
}
