/**
 * Stripe.js, loaded on demand from Stripe (never bundled: Stripe requires it to come from
 * js.stripe.com). Only the few calls of the card field are typed here.
 */

export const STRIPE_JS_URL = 'https://js.stripe.com/v3/';

/** How long the script may take before the page falls back to the token field. */
const LOAD_TIMEOUT_MS = 15_000;

export interface StripeCardChange {
  complete: boolean;
  error?: { message: string };
}

export interface StripeCardElement {
  mount(target: HTMLElement): void;
  destroy(): void;
  on(event: 'change', handler: (change: StripeCardChange) => void): void;
}

export interface StripeSetupResult {
  setupIntent?: { payment_method: string | { id: string } | null };
  error?: { message?: string; code?: string };
}

export interface StripeClient {
  elements(): { create(type: 'card', options?: { hidePostalCode?: boolean }): StripeCardElement };
  confirmCardSetup(
    clientSecret: string,
    data: { payment_method: { card: StripeCardElement } },
  ): Promise<StripeSetupResult>;
}

type StripeFactory = (publishableKey: string) => StripeClient;

function stripeGlobal(): StripeFactory | undefined {
  return (window as unknown as { Stripe?: StripeFactory }).Stripe;
}

let loading: Promise<StripeFactory> | undefined;

/** Adds Stripe's script tag once; a failed load can be tried again (the tag is removed). */
function loadScript(): Promise<StripeFactory> {
  const ready = stripeGlobal();
  if (ready !== undefined) {
    return Promise.resolve(ready);
  }
  loading ??= new Promise<StripeFactory>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = STRIPE_JS_URL;
    script.async = true;
    const fail = (why: string) => {
      clearTimeout(timer);
      script.remove();
      loading = undefined;
      reject(new Error(why));
    };
    const timer = setTimeout(() => fail('Stripe.js took too long to load'), LOAD_TIMEOUT_MS);
    script.addEventListener('load', () => {
      const factory = stripeGlobal();
      if (factory === undefined) {
        fail('Stripe.js loaded but did not start');
        return;
      }
      clearTimeout(timer);
      resolve(factory);
    });
    script.addEventListener('error', () => fail(`Stripe.js could not be loaded from ${STRIPE_JS_URL}`));
    document.head.appendChild(script);
  });
  return loading;
}

const clients = new Map<string, StripeClient>();

/** One Stripe client per publishable key, loading Stripe.js first if needed. */
export async function loadStripe(publishableKey: string): Promise<StripeClient> {
  const known = clients.get(publishableKey);
  if (known !== undefined) {
    return known;
  }
  const client = (await loadScript())(publishableKey);
  clients.set(publishableKey, client);
  return client;
}

/** The id of the card a confirmed SetupIntent saved. */
export function setupPaymentMethodId(result: StripeSetupResult): string | undefined {
  const pm = result.setupIntent?.payment_method;
  if (pm === null || pm === undefined) {
    return undefined;
  }
  return typeof pm === 'string' ? pm : pm.id;
}
