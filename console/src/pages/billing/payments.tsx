import { type FormEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { Busy, ErrorNote, Field } from '../../components/ui';
import { loadStripe, setupPaymentMethodId, type StripeCardElement, type StripeClient } from './stripe-js';

type Billing = Schemas['BillingResponseDto'];

const TEST_PROVIDER_HINT = (
  <>
    A one-time token from the payment provider. With the local test provider (<code>npm start</code>):{' '}
    <code>tok_visa</code>, <code>tok_mastercard</code>, <code>tok_amex</code>, or <code>tok_chargeDeclined</code>{' '}
    (stored, then declined on every charge).
  </>
);

/** Stripe without its card field: the ids Stripe's test mode knows, or what a live account needs. */
function stripeTokenHint(publishableKey: string | null): ReactNode {
  if (publishableKey === null || publishableKey.startsWith('pk_test_')) {
    return (
      <>
        A Stripe PaymentMethod id (<code>pm_…</code>) or card token (<code>tok_…</code>). In Stripe’s test mode:{' '}
        <code>pm_card_visa</code> or <code>tok_visa</code> (a Visa ending in 4242), or{' '}
        <code>pm_card_chargeDeclined</code> (stored, then declined on every charge).
      </>
    );
  }
  return (
    <>
      A Stripe PaymentMethod id (<code>pm_…</code>) or card token (<code>tok_…</code>) made with Stripe.js for this
      account.
    </>
  );
}

/** The card on file, and how to store or replace it: this depends on who takes payments on this server. */
export function PaymentMethod({ billing, onChange }: { billing: Billing; onChange: () => Promise<void> }) {
  const card = billing.paymentMethod;
  let form: ReactNode;
  switch (billing.provider) {
    case 'none':
      form = <p>Payments are off on this server: no card can be stored and nothing can be bought.</p>;
      break;
    case 'test':
      form = <TokenForm hasCard={card !== null} hint={TEST_PROVIDER_HINT} onStored={onChange} />;
      break;
    case 'stripe':
      form = <StripeForm billing={billing} onStored={onChange} />;
      break;
  }
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
      {form}
    </section>
  );
}

/** Stores a payment method given as a token or id, typed in. */
function TokenForm({ hasCard, hint, onStored }: { hasCard: boolean; hint: ReactNode; onStored: () => Promise<void> }) {
  const [token, setToken] = useState('');
  const [saved, setSaved] = useState(false);
  const store = useAction(async () => {
    await unwrap(api.POST('/api/billing/payment-method', { body: { paymentMethodToken: token.trim() } }));
    setToken('');
    await onStored();
    setSaved(true);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    void store.run();
  };
  return (
    <form onSubmit={submit}>
      <Field
        label={hasCard ? 'New payment method token' : 'Payment method token'}
        error={store.error?.fieldMessage('paymentMethodToken')}
        hint={hint}
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
      <ErrorNote error={store.error} title="Could not store the payment method" fields={['paymentMethodToken']} />
      <StoredNote saved={saved && store.error === undefined} />
      <button type="submit" disabled={store.busy}>
        {store.busy ? 'Storing…' : hasCard ? 'Replace payment method' : 'Add payment method'}
      </button>
    </form>
  );
}

function StoredNote({ saved }: { saved: boolean }) {
  return saved ? (
    <p className="notice" role="status">
      Payment method stored.
    </p>
  ) : null;
}

type StripeJsState = { state: 'loading' } | { state: 'ready'; client: StripeClient } | { state: 'failed'; why: string };

/**
 * Stripe: its own card field (Stripe.js, loaded from js.stripe.com when the server has a publishable
 * key), or, where Stripe.js cannot load, a PaymentMethod id or token typed in.
 */
function StripeForm({ billing, onStored }: { billing: Billing; onStored: () => Promise<void> }) {
  const key = billing.publishableKey;
  const [stripeJs, setStripeJs] = useState<StripeJsState>({ state: 'loading' });
  useEffect(() => {
    if (key === null) {
      return undefined;
    }
    let current = true;
    setStripeJs({ state: 'loading' });
    loadStripe(key).then(
      (client) => current && setStripeJs({ state: 'ready', client }),
      (err: unknown) =>
        current && setStripeJs({ state: 'failed', why: err instanceof Error ? err.message : String(err) }),
    );
    return () => {
      current = false;
    };
  }, [key]);
  const hasCard = billing.paymentMethod !== null;
  const fallback = (note: ReactNode) => (
    <>
      <p className="hint" data-testid="stripe-card-unavailable">
        {note}
      </p>
      <TokenForm hasCard={hasCard} hint={stripeTokenHint(key)} onStored={onStored} />
    </>
  );
  if (key === null) {
    return fallback(
      <>
        Stripe’s card field is not available: this server has no publishable key (<code>STRIPE_PUBLISHABLE_KEY</code>).
        Enter a payment method instead.
      </>,
    );
  }
  switch (stripeJs.state) {
    case 'loading':
      return <Busy label="Loading Stripe’s card field…" />;
    case 'failed':
      return fallback(
        <>
          Stripe’s card field is not available: {stripeJs.why}. This browser cannot reach js.stripe.com (offline, or
          blocked by a network filter or an extension). Enter a payment method instead.
        </>,
      );
    case 'ready':
      return <CardForm client={stripeJs.client} hasCard={hasCard} onStored={onStored} />;
  }
}

/** Stripe's card field: a SetupIntent confirmed by Stripe.js saves the card, whose id is then stored. */
function CardForm({
  client,
  hasCard,
  onStored,
}: {
  client: StripeClient;
  hasCard: boolean;
  onStored: () => Promise<void>;
}) {
  const target = useRef<HTMLDivElement>(null);
  const card = useRef<StripeCardElement>(undefined);
  const [cardError, setCardError] = useState<string>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (target.current === null) {
      return undefined;
    }
    const element = client.elements().create('card', { hidePostalCode: true });
    element.mount(target.current);
    element.on('change', (change) => setCardError(change.error?.message));
    card.current = element;
    return () => {
      card.current = undefined;
      element.destroy();
    };
  }, [client]);
  // What Stripe said when it refused the card (its own words and code: card_declined, incorrect_cvc, …).
  const [refused, setRefused] = useState<{ message: string; code: string }>();
  const store = useAction(async () => {
    const element = card.current;
    if (element === undefined) {
      return;
    }
    const { clientSecret } = await unwrap(api.POST('/api/billing/setup-intent'));
    const result = await client.confirmCardSetup(clientSecret, { payment_method: { card: element } });
    const paymentMethodId = setupPaymentMethodId(result);
    if (result.error !== undefined || paymentMethodId === undefined) {
      setRefused({
        message: result.error?.message ?? 'Stripe did not save the card.',
        code: result.error?.code ?? 'setup_failed',
      });
      return;
    }
    await unwrap(api.POST('/api/billing/payment-method', { body: { paymentMethodToken: paymentMethodId } }));
    await onStored();
    setSaved(true);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    setRefused(undefined);
    void store.run();
  };
  return (
    <form onSubmit={submit}>
      <fieldset>
        <legend>{hasCard ? 'New card' : 'Card'}</legend>
        <div ref={target} className="card-field" data-testid="stripe-card" />
        {cardError === undefined ? null : (
          <small className="field-error" role="alert">
            {cardError}
          </small>
        )}
        <small className="hint">Card details go to Stripe directly; this server never sees the number.</small>
      </fieldset>
      <ErrorNote error={store.error} title="Could not store the payment method" />
      {refused === undefined ? null : (
        <div className="error-note" role="alert" data-code={refused.code}>
          <p>
            <strong>Stripe refused the card:</strong> {refused.message}
          </p>
          <details>
            <summary>Details for support</summary>
            Stripe&apos;s code: <code>{refused.code}</code>
          </details>
        </div>
      )}
      <StoredNote saved={saved && store.error === undefined} />
      <button type="submit" disabled={store.busy}>
        {store.busy ? 'Storing…' : hasCard ? 'Replace payment method' : 'Add payment method'}
      </button>
    </form>
  );
}
