import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { type Page } from '../common/pagination.js';
import { CreditsRepository } from './credits.repository.js';
import {
  decodeLedgerCursor,
  encodeLedgerCursor,
  type LedgerEntry,
  type LedgerReason,
  runIdOf,
} from './ledger-entry.js';

/** Credits a model turn costs: one per started thousand tokens, at least one. */
export function creditsFor(usage: { inputTokens: number; outputTokens: number }): number {
  return Math.max(1, Math.ceil((usage.inputTokens + usage.outputTokens) / 1000));
}

/**
 * Credits a model request is held for before it is sent: its input's estimated cost, one credit per
 * started thousand estimated tokens (4 bytes of its JSON a token, which estimates low for JSON and
 * non-Latin text, so a call the balance can pay is not refused), at least one.
 */
export function creditsToReserve(request: unknown): number {
  const bytes = Buffer.byteLength(JSON.stringify(request) ?? '', 'utf8');
  return creditsFor({ inputTokens: Math.ceil(bytes / 4), outputTokens: 0 });
}

/** How long a hold lasts when its call never settles (its process died): past any model call's timeout. */
export const CREDIT_HOLD_TTL_MS = 5 * 60_000;

export interface Charge {
  charged: number;
  balance: number;
}

/**
 * Credit balances with a ledger: every change is a row, written in the same transaction as the
 * balance under a row lock, so the balance never goes negative and never drifts from the ledger.
 */
@Injectable()
export class CreditsService {
  constructor(private readonly creditRows: CreditsRepository) {}

  async balance(userId: string): Promise<number> {
    return this.creditRows.balance(userId);
  }

  /** The user's ledger, newest first; `cursor` is the nextCursor of the previous page (VALIDATION_ERROR if not one). */
  async ledger(userId: string, limit: number, cursor: string | undefined): Promise<Page<LedgerEntry>> {
    const rows = await this.creditRows.page(
      userId,
      limit,
      cursor === undefined ? undefined : decodeLedgerCursor(cursor),
    );
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map((row) => ({
        id: row.id,
        amount: row.delta,
        reason: row.reason as LedgerReason,
        balanceAfter: row.balanceAfter,
        runId: runIdOf(row.reference),
        createdAt: row.createdAt.toISOString(),
      })),
      nextCursor: rows.length > limit && last !== undefined ? encodeLedgerCursor(last.id) : null,
    };
  }

  /**
   * The ledger row of credits a new account starts with (already in its balance), in the
   * transaction that inserts the account, so the ledger adds up to the balance from the first row.
   */
  async recordOpening(em: EntityManager, userId: string, credits: number, reason: LedgerReason): Promise<void> {
    if (credits > 0) {
      await this.creditRows.recordOpening(em, { userId, credits, reason });
    }
  }

  /**
   * Holds `amount` credits for the model call `key` (the reference its charge will carry), or
   * NO_CREDITS when the balance less what other calls in flight hold does not cover it. Decided under
   * the user's row lock: N calls at once against a balance that covers one let one through. The
   * charge with the same reference releases the hold; so does `release` (a call that failed), and
   * its expiry (a process that died).
   */
  async reserve(userId: string, key: string, amount: number): Promise<void> {
    let held: { reserved: boolean; available: number };
    try {
      held = await this.creditRows.reserve(userId, key, amount, CREDIT_HOLD_TTL_MS);
    } catch (err) {
      if ((err as { code?: string }).code === 'P0002') {
        throw new AppError('NOT_FOUND', 'No user with this id');
      }
      throw err;
    }
    if (!held.reserved) {
      throw new AppError(
        'NO_CREDITS',
        `Insufficient credit balance: the model call needs ${amount} credit${amount === 1 ? '' : 's'}, ${held.available} available`,
      );
    }
  }

  /** Releases the hold of a call that ends without a charge. */
  async release(userId: string, key: string): Promise<void> {
    await this.creditRows.release(userId, key);
  }

  /** NO_CREDITS unless the user has a positive balance. */
  async assertCredits(userId: string): Promise<void> {
    if ((await this.balance(userId)) <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
  }

  /**
   * Charges up to `amount` (what is left, if less: usage already happened). With a `reference`, a
   * repeated charge (a retried activity) charges nothing twice. With a `run`, a new charge adds its
   * usage to the run in the same transaction. One round trip (the charge_credits function).
   */
  async charge(
    userId: string,
    amount: number,
    reason: LedgerReason,
    reference?: string,
    run?: { runId: string; inputTokens: number; outputTokens: number },
  ): Promise<Charge> {
    try {
      return await this.creditRows.charge(userId, amount, reason, reference ?? null, run);
    } catch (err) {
      if ((err as { code?: string }).code === 'P0002') {
        throw new AppError('NOT_FOUND', 'No user with this id');
      }
      throw err;
    }
  }

  /** Adds (or with a negative delta, removes) credits, refusing to go below zero. */
  async adjust(
    userId: string,
    delta: number,
    reason: LedgerReason,
    reference?: string,
    em?: EntityManager,
  ): Promise<number> {
    const run = async (tx: EntityManager): Promise<number> => {
      const credits = await this.lockBalance(tx, userId);
      if (credits + delta < 0) {
        throw new AppError('NO_CREDITS', 'Insufficient credit balance');
      }
      return this.record(tx, userId, credits, delta, reason, reference);
    };
    return em ? run(em) : this.creditRows.transaction(run);
  }

  /**
   * Sets the user's balance to `target` through the ledger (one adjustment by the difference), under
   * the row lock, in a transaction of its own.
   */
  async setBalance(userId: string, target: number, reason: LedgerReason): Promise<number> {
    return this.creditRows.transaction(async (em) => {
      const credits = await this.lockBalance(em, userId);
      // Setting the balance it already has moves nothing: no ledger row for it.
      return credits === target ? credits : this.adjust(userId, target - credits, reason, undefined, em);
    });
  }

  private async lockBalance(em: EntityManager, userId: string): Promise<number> {
    const credits = await this.creditRows.lockBalance(em, userId);
    if (credits === undefined) {
      throw new AppError('NOT_FOUND', 'No user with this id');
    }
    return credits;
  }

  private async record(
    em: EntityManager,
    userId: string,
    credits: number,
    delta: number,
    reason: LedgerReason,
    reference?: string,
  ): Promise<number> {
    const balance = credits + delta;
    await this.creditRows.record(em, { userId, delta, reason, reference: reference ?? null, balance });
    return balance;
  }
}
