import { type EnvReader } from './env-reader.js';
import { isLoopbackHost } from './listen-address.js';

/**
 * The payment providers the service knows: `stripe` takes real payments with its own settings;
 * `test` hands out credits and tiers for test card tokens, so it needs ALLOW_TEST_PAYMENTS.
 */
export const PAYMENT_PROVIDERS = ['none', 'test', 'stripe'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDERS)[number];

/** The paid tiers, each sold as one Stripe price (STRIPE_PRICE_PRO, …). */
export const PAID_TIERS = ['pro', 'harness', 'team'] as const;
export type PaidTier = (typeof PAID_TIERS)[number];

export interface StripeSettings {
  /** STRIPE_SECRET_KEY: `sk_live_…`, `sk_test_…` or a restricted `rk_…` key. Secret. */
  secretKey: string;
  /** STRIPE_WEBHOOK_SECRET: the endpoint's signing secret `whsec_…`. Secret. */
  webhookSecret: string;
  /** STRIPE_PUBLISHABLE_KEY (`pk_…`): lets the console load Stripe's card field; undefined: token entry only. */
  publishableKey: string | undefined;
  /** STRIPE_API_BASE: another API host (stripe-mock in tests); undefined: api.stripe.com. */
  apiBase: string | undefined;
  /** The recurring price of each paid tier (STRIPE_PRICE_PRO, STRIPE_PRICE_HARNESS, STRIPE_PRICE_TEAM). */
  prices: Record<PaidTier, string>;
}

/**
 * The payment settings' own checks: the test provider must be asked for twice (and a third time to be
 * served beyond this machine); PAYMENT_PROVIDER=stripe reads and checks every Stripe setting.
 */
export function readPaymentSettings(
  settings: {
    host: string;
    paymentProvider: PaymentProviderName;
    allowTestPayments: boolean;
    allowTestPaymentsOnNetwork: boolean;
  },
  reader: EnvReader,
  problems: string[],
): StripeSettings | undefined {
  if (settings.paymentProvider === 'test' && !settings.allowTestPayments) {
    // The test provider grants credits and tiers for well-known test card tokens: free money for
    // anyone who can register, so it must be asked for twice.
    problems.push(
      'PAYMENT_PROVIDER=test accepts test card tokens and grants credits and tiers for free: it needs ' +
        'ALLOW_TEST_PAYMENTS=true (development and tests only); production leaves PAYMENT_PROVIDER unset (none)',
    );
  }

  if (settings.paymentProvider === 'test' && !isLoopbackHost(settings.host) && !settings.allowTestPaymentsOnNetwork) {
    // Free credits and tiers for whoever reaches the port: on loopback that is this machine's user only.
    problems.push(
      `PAYMENT_PROVIDER=test grants credits and tiers for free and HOST=${settings.host} serves it beyond this machine: ` +
        'listen on loopback (HOST unset or 127.0.0.1), turn payments off (PAYMENT_PROVIDER=none), or set ' +
        'ALLOW_TEST_PAYMENTS_ON_NETWORK=true for a test network nobody else reaches',
    );
  }

  if (settings.paymentProvider === 'stripe') {
    return readStripeSettings(reader, problems);
  }
  return undefined;
}

/** PAYMENT_PROVIDER=stripe: every Stripe setting it needs, each checked for the shape Stripe gives it. */
function readStripeSettings(reader: EnvReader, problems: string[]): StripeSettings {
  const shaped = (name: string, pattern: RegExp, example: string, required: boolean): string | undefined => {
    const value = reader.str(name);
    if (value === undefined) {
      if (required) {
        problems.push(`PAYMENT_PROVIDER=stripe needs ${name} (${example}, from the Stripe dashboard)`);
      }
      return undefined;
    }
    if (!pattern.test(value)) {
      problems.push(`${name} must look like ${example}`);
    }
    return value;
  };
  const price = (tier: PaidTier): string =>
    shaped(`STRIPE_PRICE_${tier.toUpperCase()}`, /^price_[A-Za-z0-9_]+$/, 'price_…', true) ?? '';
  return {
    secretKey: shaped('STRIPE_SECRET_KEY', /^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/, 'sk_live_… or sk_test_…', true) ?? '',
    webhookSecret: shaped('STRIPE_WEBHOOK_SECRET', /^whsec_[A-Za-z0-9_+/=]+$/, 'whsec_…', true) ?? '',
    publishableKey: shaped('STRIPE_PUBLISHABLE_KEY', /^pk_(test|live)_[A-Za-z0-9_]+$/, 'pk_live_… or pk_test_…', false),
    apiBase: reader.url('STRIPE_API_BASE', ['http:', 'https:']),
    prices: { pro: price('pro'), harness: price('harness'), team: price('team') },
  };
}
