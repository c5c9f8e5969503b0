import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import type { Settings } from '../config/settings.js';

export interface CardOnFile {
  brand: string;
  last4: string;
  /** The provider's reference for the stored method. */
  ref: string;
}

export interface PaymentProvider {
  /** False when the server takes no payments (PAYMENT_PROVIDER=none): every payment is refused up front. */
  readonly configured: boolean;
  /** Turns a one-time token from the client into a stored payment method (VALIDATION_ERROR if unknown). */
  attach(token: string): Promise<CardOnFile>;
  /** Charges the method; PAYMENT_FAILED when declined. Returns the charge's id. */
  charge(method: CardOnFile, amountCents: number, description: string): Promise<string>;
}

export const PAYMENT_PROVIDER = Symbol('PAYMENT_PROVIDER');

/** The one answer of a server without a payment provider (see NoPaymentProvider). */
export function paymentsNotConfigured(): AppError {
  return new AppError('PAYMENT_FAILED', 'payments are not configured on this server');
}

/**
 * PAYMENT_PROVIDER=none (the default): nothing can be attached or charged, so no credit or tier is
 * ever granted by a payment. PAYMENT_FAILED (402) rather than NO_PAYMENT_METHOD: the client did
 * nothing wrong and adding a card would not help; the payment itself is impossible here.
 */
@Injectable()
export class NoPaymentProvider implements PaymentProvider {
  readonly configured = false;

  async attach(): Promise<CardOnFile> {
    throw paymentsNotConfigured();
  }

  async charge(): Promise<string> {
    throw paymentsNotConfigured();
  }
}

/** Test cards, as a card processor's test mode has them. */
const TEST_CARDS: Record<string, { brand: string; last4: string; declines: boolean }> = {
  tok_visa: { brand: 'visa', last4: '4242', declines: false },
  tok_mastercard: { brand: 'mastercard', last4: '4444', declines: false },
  tok_amex: { brand: 'amex', last4: '8431', declines: false },
  tok_chargeDeclined: { brand: 'visa', last4: '0002', declines: true },
};

/**
 * PAYMENT_PROVIDER=test (only with ALLOW_TEST_PAYMENTS=true): local, no network, deterministic. `tok_visa` attaches and charges;
 * `tok_chargeDeclined` attaches, then every charge is declined.
 */
@Injectable()
export class TestPaymentProvider implements PaymentProvider {
  readonly configured = true;

  async attach(token: string): Promise<CardOnFile> {
    const card = TEST_CARDS[token];
    if (card === undefined) {
      throw AppError.validation([
        {
          field: 'paymentMethodToken',
          message: `unknown token; test tokens are ${Object.keys(TEST_CARDS).join(', ')}`,
        },
      ]);
    }
    return { brand: card.brand, last4: card.last4, ref: `pm_test_${token}_${randomUUID().slice(0, 8)}` };
  }

  async charge(method: CardOnFile, amountCents: number, description: string): Promise<string> {
    const token = /^pm_test_(tok_[A-Za-z]+)_/.exec(method.ref)?.[1];
    const card = token === undefined ? undefined : TEST_CARDS[token];
    if (card === undefined || card.declines) {
      throw new AppError('PAYMENT_FAILED', `The card ending ${method.last4} was declined (${description})`);
    }
    if (!Number.isInteger(amountCents) || amountCents <= 0) {
      throw new AppError('PAYMENT_FAILED', 'Invalid charge amount');
    }
    return `ch_test_${randomUUID()}`;
  }
}

/** The provider the settings name (`stripe` joins here when it exists). */
export function paymentProviderFor(settings: Pick<Settings, 'paymentProvider' | 'allowTestPayments'>): PaymentProvider {
  switch (settings.paymentProvider) {
    case 'test':
      // loadSettings refuses `test` without the allowance; checked again so no other path can skip it.
      return settings.allowTestPayments ? new TestPaymentProvider() : new NoPaymentProvider();
    case 'none':
      return new NoPaymentProvider();
    case 'stripe':
      throw new Error('PAYMENT_PROVIDER=stripe: the Stripe provider is being built (issue #16)');
  }
}
