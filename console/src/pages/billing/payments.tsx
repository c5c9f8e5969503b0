import { type FormEvent, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, Field, formatCredits } from '../../components/ui';

type Billing = Schemas['BillingResponseDto'];

/** The card on file, and the form that stores or replaces it with a token from the payment provider. */
export function PaymentMethod({ billing, onChange }: { billing: Billing; onChange: () => Promise<void> }) {
  const [token, setToken] = useState('');
  const [saved, setSaved] = useState(false);
  const store = useAction(async () => {
    await unwrap(api.POST('/api/billing/payment-method', { body: { paymentMethodToken: token.trim() } }));
    setToken('');
    await onChange();
    setSaved(true);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    void store.run();
  };
  const card = billing.paymentMethod;
  return (
    <section aria-labelledby="card-heading" className="panel">
      <h2 id="card-heading">Payment method</h2>
      <p data-testid="payment-method">
        {card === null ? (
          'No payment method yet.'
        ) : (
          <>
            <strong>{card.brand}</strong> ending in <strong>{card.last4}</strong>
          </>
        )}
      </p>
      <form onSubmit={submit}>
        <Field
          label={card === null ? 'Payment method token' : 'New payment method token'}
          error={store.error?.fieldMessage('paymentMethodToken')}
          hint={
            <>
              A one-time token from the payment provider. With the local test provider (<code>npm start</code>):{' '}
              <code>tok_visa</code>, <code>tok_mastercard</code>, <code>tok_amex</code>, or{' '}
              <code>tok_chargeDeclined</code> (stored, then declined on every charge).
            </>
          }
        >
          {(p) => (
            <input
              {...p}
              required
              maxLength={200}
              autoComplete="off"
              spellCheck={false}
              value={token}
              onChange={(e) => setToken(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote error={store.error} title="Could not store the payment method" />
        {saved && store.error === undefined ? (
          <p className="notice" role="status">
            Payment method stored.
          </p>
        ) : null}
        <button type="submit" disabled={store.busy}>
          {store.busy ? 'Storing…' : card === null ? 'Add payment method' : 'Replace payment method'}
        </button>
      </form>
    </section>
  );
}

/** Buying credits: charged to the card on file; NO_PAYMENT_METHOD and PAYMENT_FAILED shown here. */
export function BuyCredits({ onBought }: { onBought: () => Promise<void> }) {
  const [amount, setAmount] = useState('500');
  const [bought, setBought] = useState<number>();
  const buy = useAction(async () => {
    const answer = await unwrap(api.POST('/api/billing/credits/purchase', { body: { amount: Number(amount) } }));
    await onBought();
    setBought(answer.credits);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setBought(undefined);
    void buy.run();
  };
  return (
    <section aria-labelledby="buy-heading" className="panel">
      <h2 id="buy-heading">Buy credits</h2>
      <form onSubmit={submit}>
        <Field
          label="Credits to buy"
          error={buy.error?.fieldMessage('amount')}
          hint="1 credit = 1 cent; charged to your payment method. A model turn costs one credit per started 1,000 tokens."
        >
          {(p) => (
            <input
              {...p}
              type="number"
              inputMode="numeric"
              min={1}
              max={1000000}
              step={1}
              required
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote error={buy.error} title="Could not buy credits" />
        {bought === undefined ? null : (
          <p className="notice" role="status">
            Bought. Your balance is now {formatCredits(bought)}.
          </p>
        )}
        <button type="submit" disabled={buy.busy}>
          {buy.busy ? 'Buying…' : 'Buy credits'}
        </button>
      </form>
    </section>
  );
}
