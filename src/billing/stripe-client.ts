import { type Logger } from '@nestjs/common';
import Stripe from 'stripe';
import { AppError } from '../common/app-error.js';
import { type StripeSettings } from '../config/settings.js';
import { PaymentOutcomeUnknown } from './payment-provider.js';

/** The metadata keys the service writes on Stripe objects, so events lead back to the purchase and the user. */
export const STRIPE_METADATA = {
  userId: 'agentsite_user_id',
  purchaseId: 'agentsite_purchase_id',
  tier: 'agentsite_tier',
} as const;

/** The Stripe client for these settings: retried writes reuse their idempotency key, as Stripe asks. */
export function stripeClient(settings: Pick<StripeSettings, 'secretKey' | 'apiBase'>): Stripe {
  const base = settings.apiBase === undefined ? undefined : new URL(settings.apiBase);
  return new Stripe(settings.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: 'agentsite' },
    ...(base === undefined
      ? {}
      : {
          host: base.hostname,
          port: base.port === '' ? (base.protocol === 'https:' ? 443 : 80) : Number(base.port),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }),
  });
}

/**
 * What a failed Stripe call answers: a declined card (or a stored card Stripe no longer takes) is
 * PAYMENT_FAILED with Stripe's reason; anything else is logged by type and code only (never the
 * request) and is PAYMENT_FAILED when Stripe refused the request, PaymentOutcomeUnknown when it may
 * have been done (no answer, or Stripe's own 5xx) and the call says so (`unknownOutcome`).
 */
export function stripeFailure(logger: Logger, what: string, err: unknown, unknownOutcome?: string): AppError {
  if (err instanceof Stripe.errors.StripeCardError) {
    const reason = err.decline_code ?? err.code ?? 'declined';
    return new AppError('PAYMENT_FAILED', `The card was declined (${reason}): ${err.message}`);
  }
  const type = err instanceof Stripe.errors.StripeError ? err.type : err instanceof Error ? err.name : 'unknown';
  const code = err instanceof Stripe.errors.StripeError ? err.code : undefined;
  logger.error({ message: `Stripe: could not ${what}`, errorType: type, code });
  // Stripe refused the request itself (a 4xx: invalid, unauthenticated, rate limited, an
  // idempotency conflict): nothing was done. Only no answer, or Stripe's own 5xx, leaves the
  // outcome unknown.
  const refused =
    err instanceof Stripe.errors.StripeError &&
    !(err instanceof Stripe.errors.StripeConnectionError) &&
    !(err instanceof Stripe.errors.StripeAPIError);
  if (refused && err instanceof Stripe.errors.StripeInvalidRequestError && err.param === 'payment_method') {
    return new AppError(
      'PAYMENT_FAILED',
      `Stripe does not accept the stored card (${code ?? type}): add the card again`,
    );
  }
  const outcome = refused ? undefined : unknownOutcome;
  const message = `The payment provider could not ${what} (${type}); ${outcome ?? 'nothing was charged'}. Try again later.`;
  return outcome === undefined ? new AppError('PAYMENT_FAILED', message) : new PaymentOutcomeUnknown(message);
}
