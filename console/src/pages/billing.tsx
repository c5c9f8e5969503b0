import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { useLoad } from '../api/hooks';
import { Busy, ErrorNote, formatCredits, PageTitle } from '../components/ui';
import { useSession } from '../session/session';
import { BuyCredits } from './billing/buy-credits';
import { PaymentMethod } from './billing/payments';
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
  // Counts the payment methods stored here: the forms whose errors a new card may have fixed clear them.
  const [cardVersion, setCardVersion] = useState(0);
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
          <PaymentMethod
            billing={data}
            onChange={async () => {
              await billing.reload();
              setCardVersion((n) => n + 1);
            }}
          />
          <BuyCredits billing={data} cardVersion={cardVersion} onBought={changed} />
          {data.provider === 'none' ? null : <Purchases purchases={purchases} onRefresh={changed} />}
          <Subscription billing={data} cardVersion={cardVersion} onChange={changed} />
        </>
      )}
      <Ledger ledger={ledger} />
    </section>
  );
}
