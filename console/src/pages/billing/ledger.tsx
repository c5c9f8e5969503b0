import { useCallback, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { type ApiError, api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { Busy, ErrorNote, formatDate } from '../../components/ui';

type Entry = Schemas['LedgerEntryDto'];

const PAGE_SIZE = 20;

const REASONS = {
  signup_grant: 'Credits for signing up',
  purchase: 'Purchase',
  model_turn: 'Agent run (model turn)',
  chat_turn: 'Chat reply (model turn)',
  admin_adjustment: 'Set by an administrator',
  tier_change: 'Plan changed by an administrator',
} satisfies Record<Schemas['LedgerReason'], string>;

export interface LedgerState {
  entries: Entry[];
  nextCursor: string | null;
  loading: boolean;
  error: ApiError | undefined;
  loadingMore: boolean;
  moreError: ApiError | undefined;
  reloadFirst: () => Promise<void>;
  loadMore: () => Promise<void>;
}

/** The ledger, newest first, one page at a time: older pages are appended by "Show older entries". */
export function useLedger(): LedgerState {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const first = useAction(async () => {
    const page = await unwrap(api.GET('/api/billing/ledger', { params: { query: { limit: PAGE_SIZE } } }));
    setEntries(page.items);
    setNextCursor(page.nextCursor);
  });
  const more = useAction(async (cursor: string) => {
    const page = await unwrap(api.GET('/api/billing/ledger', { params: { query: { limit: PAGE_SIZE, cursor } } }));
    setEntries((shown) => [...shown, ...page.items]);
    setNextCursor(page.nextCursor);
  });
  const [started, setStarted] = useState(false);
  const { run: runFirst } = first;
  const { run: runMore } = more;
  useEffect(() => {
    setStarted(true);
    void runFirst();
  }, [runFirst]);
  const reloadFirst = useCallback(async () => {
    await runFirst();
  }, [runFirst]);
  const loadMore = useCallback(async () => {
    if (nextCursor !== null) {
      await runMore(nextCursor);
    }
  }, [nextCursor, runMore]);
  return {
    entries,
    nextCursor,
    loading: !started || first.busy,
    error: first.error,
    loadingMore: more.busy,
    moreError: more.error,
    reloadFirst,
    loadMore,
  };
}

function signed(amount: number): string {
  return amount > 0 ? `+${amount.toLocaleString()}` : amount.toLocaleString();
}

export function Ledger({ ledger }: { ledger: LedgerState }) {
  return (
    <section aria-labelledby="ledger-heading" className="panel">
      <h2 id="ledger-heading">Credit ledger</h2>
      <p className="hint">Every change of your balance, newest first. 1 credit = 1 cent.</p>
      <ErrorNote error={ledger.error} title="Could not load the ledger" />
      {ledger.loading && ledger.entries.length === 0 ? <Busy label="Loading the ledger…" /> : null}
      {ledger.entries.length === 0 && !ledger.loading && ledger.error === undefined ? <p>No entries yet.</p> : null}
      {ledger.entries.length > 0 ? (
        <table aria-labelledby="ledger-heading">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Credits</th>
              <th scope="col">Balance after</th>
            </tr>
          </thead>
          <tbody>
            {ledger.entries.map((entry) => (
              <tr key={entry.id}>
                <td>{formatDate(entry.createdAt)}</td>
                <td>
                  {REASONS[entry.reason]}
                  {entry.tierChange === null ? null : ` (${entry.tierChange.from} to ${entry.tierChange.to})`}
                  {entry.runId === null ? null : (
                    <>
                      {' '}
                      (<Link to={`/runs/${entry.runId}`}>run</Link>)
                    </>
                  )}
                </td>
                <td>{signed(entry.amount)}</td>
                <td>{entry.balanceAfter.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <ErrorNote error={ledger.moreError} title="Could not load older entries" />
      {ledger.nextCursor === null ? null : (
        <div className="actions">
          <button
            type="button"
            className="secondary"
            onClick={() => void ledger.loadMore()}
            disabled={ledger.loadingMore}
          >
            {ledger.loadingMore ? 'Loading older entries…' : 'Show older entries'}
          </button>
        </div>
      )}
    </section>
  );
}
