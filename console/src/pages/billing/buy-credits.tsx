import { type FormEvent, useEffect, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field, formatCredits } from '../../components/ui';

type Billing = Schemas['BillingResponseDto'];
type Purchase = Schemas['PurchaseDto'];

/** Stripe's smallest charge is 50 cents: the API refuses fewer credits under Stripe. */
export const STRIPE_MINIMUM_CREDITS = 50;

export function minimumCredits(billing: Billing): number {
  return billing.provider === 'stripe' ? STRIPE_MINIMUM_CREDITS : 1;
}

/** What became of a purchase just made. */
function PurchaseNote({ answer }: { answer: { credits: number; purchase: Purchase } }) {
  switch (answer.purchase.status) {
    case 'succeeded':
      return (
        <p className="notice" role="status">
          Bought. Your balance is now {formatCredits(answer.credits)}.
        </p>
      );
    case 'pending':
      return (
        <p className="notice" role="status">
          Payment processing: the {answer.purchase.credits.toLocaleString()} credits are added when the payment is
          confirmed. Refresh the purchases below to see it.
        </p>
      );
    case 'failed':
      return (
        <p className="error-note" role="status">
          The payment failed: nothing was added.
        </p>
      );
  }
}

/**
 * Buying credits: charged to the card on file; NO_PAYMENT_METHOD and PAYMENT_FAILED shown here. The
 * purchase succeeds at once or stays pending until the provider confirms the payment.
 */
export function BuyCredits({
  billing,
  cardVersion,
  onBought,
}: {
  billing: Billing;
  /** Counts the payment methods stored: a new one clears what the last attempt said about the old. */
  cardVersion: number;
  onBought: () => Promise<void>;
}) {
  const [amount, setAmount] = useState('500');
  const [bought, setBought] = useState<{ credits: number; purchase: Purchase }>();
  const buy = useAction(async () => {
    let answer;
    try {
      answer = await unwrap(api.POST('/api/billing/credits/purchase', { body: { amount: Number(amount) } }));
    } finally {
      // A declined charge is listed too (failed): the purchases and the balance are fetched again either way.
      await onBought();
    }
    setBought(answer);
  });
  const { clearError } = buy;
  useEffect(() => {
    // "Add a payment method first" or "declined" was about the card before this one.
    clearError();
    setBought(undefined);
  }, [cardVersion, clearError]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setBought(undefined);
    void buy.run();
  };
  const minimum = minimumCredits(billing);
  return (
    <section aria-labelledby="buy-heading" className="panel">
      <h2 id="buy-heading">Buy credits</h2>
      {billing.provider === 'none' ? (
        <p>Payments are off on this server: credits come only from an administrator.</p>
      ) : (
        <form onSubmit={submit}>
          <Field
            label="Credits to buy"
            error={buy.error?.fieldMessage('amount')}
            hint={
              <>
                1 credit = 1 cent; charged to your payment method.
                {minimum > 1
                  ? ` At least ${minimum} credits ($${(minimum / 100).toFixed(2)}), Stripe’s smallest charge.`
                  : null}{' '}
                A model turn costs one credit per started 1,000 tokens.
              </>
            }
          >
            {(p) => (
              <input
                {...p}
                type="number"
                inputMode="numeric"
                min={minimum}
                max={1000000}
                step={1}
                required
                value={amount}
                onChange={(e) => setAmount(e.target.value)}
              />
            )}
          </Field>
          {billing.paymentMethod === null ? (
            <p className="notice" data-testid="buy-needs-card">
              Add a payment method above first: credits are charged to it.
            </p>
          ) : null}
          <ErrorNote error={buy.error} title="Could not buy credits" fields={['amount']} />
          {bought === undefined ? null : <PurchaseNote answer={bought} />}
          <button type="submit" disabled={buy.busy || billing.paymentMethod === null}>
            {buy.busy ? 'Buying…' : 'Buy credits'}
          </button>
        </form>
      )}
    </section>
  );
}
