import { useCallback } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { type Loaded, useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, Pager, type PagerState, usePager } from '../../components/ui';

type PurchasePage = Schemas['PurchasePageDto'];
type PurchaseStatus = Schemas['PurchaseStatus'];

const PAGE_SIZE = 10;

const STATUSES = {
  pending: { label: 'processing', badge: 'badge warn' },
  succeeded: { label: 'succeeded', badge: 'badge ok' },
  failed: { label: 'failed', badge: 'badge bad' },
} satisfies Record<PurchaseStatus, { label: string; badge: string }>;

export interface PurchasesState {
  pager: PagerState;
  page: Loaded<PurchasePage>;
  /** After a purchase: back to the first page, fetched again. */
  showNewest: () => Promise<void>;
}

/** The credit purchases, newest first, a page at a time. */
export function usePurchases(): PurchasesState {
  const pager = usePager();
  const { cursor, first } = pager;
  const page = useLoad(
    () =>
      unwrap(
        api.GET('/api/billing/purchases', {
          params: { query: { limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) } },
        }),
      ),
    [cursor],
  );
  const { reload } = page;
  const showNewest = useCallback(async () => {
    first();
    await reload();
  }, [first, reload]);
  return { pager, page, showNewest };
}

/**
 * The purchases with their status: a pending one (the payment is processing) turns succeeded or
 * failed when the provider confirms it; "Refresh" fetches them again with the balance.
 */
export function Purchases({ purchases, onRefresh }: { purchases: PurchasesState; onRefresh: () => Promise<void> }) {
  const { page, pager } = purchases;
  const pending = page.data?.items.some((p) => p.status === 'pending') ?? false;
  return (
    <section aria-labelledby="purchases-heading" className="panel">
      <h2 id="purchases-heading">Purchases</h2>
      <p className="hint">
        Your credit purchases, newest first. A processing purchase adds its credits when the payment is confirmed.
      </p>
      <div className="actions">
        <button type="button" className="secondary" disabled={page.loading} onClick={() => void onRefresh()}>
          Refresh purchases
        </button>
      </div>
      <ErrorNote error={page.error} title="Could not load the purchases" />
      {page.data === undefined ? (
        page.loading ? (
          <Busy label="Loading the purchases…" />
        ) : null
      ) : page.data.items.length === 0 && !pager.hasPrevious ? (
        <p>No purchases yet.</p>
      ) : (
        <>
          {pending ? <p role="status">A payment is processing: refresh to see whether it went through.</p> : null}
          <table aria-labelledby="purchases-heading">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Credits</th>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Settled</th>
              </tr>
            </thead>
            <tbody>
              {page.data.items.map((purchase) => (
                <tr key={purchase.id}>
                  <td>{formatDate(purchase.createdAt)}</td>
                  <td>{purchase.credits.toLocaleString()}</td>
                  <td>${(purchase.amountCents / 100).toFixed(2)}</td>
                  <td>
                    <span className={STATUSES[purchase.status].badge}>{STATUSES[purchase.status].label}</span>
                  </td>
                  <td>{formatDate(purchase.settledAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager
            pager={pager}
            nextCursor={page.data.nextCursor}
            label="Purchase pages"
            previousLabel="Newer purchases"
            nextLabel="Older purchases"
          />
        </>
      )}
    </section>
  );
}
