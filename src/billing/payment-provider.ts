import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';

export interface CardOnFile {
  brand: string;
  last4: string;
  /** The provider's reference for the stored method. */
  ref: string;
}

export interface PaymentProvider {
  /** Turns a one-time token from the client into a stored payment method (VALIDATION_ERROR if unknown). */
  attach(token: string): Promise<CardOnFile>;
  /** Charges the method; PAYMENT_FAILED when declined. Returns the charge's id. */
  charge(method: CardOnFile, amountCents: number, description: string): Promise<string>;
}

export const PAYMENT_PROVIDER = Symbol('PAYMENT_PROVIDER');

/** Test cards, as a card processor's test mode has them. */
const TEST_CARDS: Record<string, { brand: string; last4: string; declines: boolean }> = {
  tok_visa: { brand: 'visa', last4: '4242', declines: false },
  tok_mastercard: { brand: 'mastercard', last4: '4444', declines: false },
  tok_amex: { brand: 'amex', last4: '8431', declines: false },
  tok_chargeDeclined: { brand: 'visa', last4: '0002', declines: true },
};

/**
 * The default provider: local, no network, deterministic. `tok_visa` attaches and charges;
 * `tok_chargeDeclined` attaches, then every charge is declined.
 */
@Injectable()
export class TestPaymentProvider implements PaymentProvider {
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
