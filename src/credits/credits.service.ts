import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { type Page } from '../common/pagination.js';
import { CreditHooks } from './credit-hooks.js';
import { CreditsRepository, type HoldPrelude } from './credits.repository.js';
import {
  decodeLedgerCursor,
  encodeLedgerCursor,
  type LedgerEntry,
  type LedgerReason,
  runIdOf,
  type TierChange,
  tierChangeOf,
  tierChangeReference,
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

export type { HoldPrelude } from './credits.repository.js';

/** A hold decided: whether the amount was held, and what is left available (what was, when refused). */
export interface HoldDecision {
  reserved: boolean;
  available: number;
}

/** The refusal of a model call whose hold the balance did not cover. */
export function noCredits(amount: number, available: number): AppError {
  return new AppError(
    'NO_CREDITS',
    `Insufficient credit balance: the model call needs ${amount} credit${amount === 1 ? '' : 's'}, ${available} available`,
  );
}

export interface Charge {
  charged: number;
  balance: number;
}

/** A run's model turn: its usage is added to the run with a new charge. */
export interface RunTurn {
  runId: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Credit balances with a ledger: every change is a row, written in the same transaction as the
 * balance under a row lock, so the balance never goes negative and never drifts from the ledger.
 */
@Injectable()
export class CreditsService {
  constructor(
    private readonly creditRows: CreditsRepository,
    private readonly hooks: CreditHooks,
  ) {}

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
        tierChange: row.reason === 'tier_change' ? tierChangeOf(row.reference) : null,
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
   * An admin's change of the user's tier, as a ledger row of no amount (`tier_change`: who, from, to),
   * in the caller's transaction (which changes the tier).
   */
  async recordTierChange(em: EntityManager, userId: string, change: TierChange & { by: string }): Promise<void> {
    const balance = await this.lockBalance(em, userId);
    const reference = tierChangeReference(change, randomUUID());
    await this.creditRows.record(em, { userId, delta: 0, reason: 'tier_change', reference, balance });
  }

  /**
   * Holds `amount` credits for the model call `key` (the reference its charge will carry), or
   * NO_CREDITS when the balance less what other calls in flight hold does not cover it. Decided under
   * the user's row lock: N calls at once against a balance that covers one let one through. The
   * charge with the same reference releases the hold; so does `release` (a call that failed), and
   * its expiry (a process that died).
   */
  async reserve(userId: string, key: string, amount: number): Promise<void> {
    const held = await this.hold(userId, key, amount, CREDIT_HOLD_TTL_MS);
    if (!held.reserved) {
      throw noCredits(amount, held.available);
    }
  }

  /**
   * The hold rule: under the user's row lock (the lock every charge takes, so concurrent calls are
   * decided one after the other), the balance less the unexpired holds of other keys must cover
   * `amount`; then the hold is written (or renewed, for a retried call with the same key) for
   * `ttlMs`. One transaction, sent in one round trip: it stands before a chat's first text and every
   * model call. Answers whether it was held, and what is left available. NOT_FOUND when there is no
   * such user.
   */
  async hold(userId: string, key: string, amount: number, ttlMs: number): Promise<HoldDecision> {
    return (await this.holdAfter(userId, key, amount, ttlMs)).hold;
  }

  /**
   * `hold`, with another feature's statements (`prelude`) run first under the same lock, in the same
   * transaction and round trip: answers the hold's decision and the prelude's rows. The prelude's
   * writes stand whatever the decision (its owner undoes them when it needs to).
   */
  async holdAfter(
    userId: string,
    key: string,
    amount: number,
    ttlMs: number,
    prelude?: HoldPrelude,
  ): Promise<{ hold: HoldDecision; prelude: Array<Array<Record<string, unknown>>> }> {
    const answered = await this.creditRows.hold({ userId, key, amount, ttlMs }, prelude);
    if (answered.decided === undefined) {
      throw new AppError('NOT_FOUND', 'No user with this id');
    }
    const { balance, held } = answered.decided;
    const hold =
      balance - held < amount
        ? { reserved: false, available: Math.max(balance - held, 0) }
        : { reserved: true, available: balance - held - amount };
    return { hold, prelude: answered.prelude };
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
   * Charges up to `amount` (what is left, if less: usage already happened), releasing the hold of
   * `reference`. With a `reference`, a repeated charge (a retried activity) charges nothing twice
   * and answers the first one's amount. With a `run`, a new charge adds its usage to the run. One
   * round trip (CreditsRepository.charge): under the user's row lock, the hold's release, the ledger
   * row, the balance and the run's usage, in one transaction. No drop of the cached user: the users
   * trigger's `credits:<id>:<balance>` notification sets the balance of every process's cached user,
   * this one's included, in commit order (a drop would make the next request read the user again:
   * after every chat turn and model turn).
   */
  async charge(
    userId: string,
    amount: number,
    reason: LedgerReason,
    reference?: string,
    run?: RunTurn,
  ): Promise<Charge> {
    const decided = await this.creditRows.charge(
      { userId, amount, reason, reference: reference ?? null, run: run ?? null },
      { balance: this.hooks.balances.chargePart, runUsage: this.hooks.runUsage },
    );
    if (decided === undefined) {
      throw new AppError('NOT_FOUND', 'No user with this id');
    }
    if (decided.previous !== null) {
      return { charged: -decided.previous, balance: decided.credits };
    }
    return { charged: decided.charged, balance: decided.credits - decided.charged };
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
    const credits = await this.hooks.balances.lock(em, userId);
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
    await this.hooks.balances.set(em, userId, balance, { dropCached: true });
    return balance;
  }
}
