import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';

/** Credits a model turn costs: one per started thousand tokens, at least one. */
export function creditsFor(usage: { inputTokens: number; outputTokens: number }): number {
  return Math.max(1, Math.ceil((usage.inputTokens + usage.outputTokens) / 1000));
}

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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async balance(userId: string): Promise<number> {
    const rows: Array<{ credits: string }> = await this.dataSource.query('SELECT credits FROM users WHERE id = $1', [
      userId,
    ]);
    return Number(rows[0]?.credits ?? 0);
  }

  /** NO_CREDITS unless the user has a positive balance. */
  async assertCredits(userId: string): Promise<void> {
    if ((await this.balance(userId)) <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
  }

  /**
   * Charges up to `amount` (what is left, if less: usage already happened). With a `reference`, a
   * repeated charge (a retried activity) charges nothing twice.
   */
  async charge(
    userId: string,
    amount: number,
    reason: string,
    reference?: string,
    /** Runs in the same transaction, only for a new charge (not a repeated one). */
    onCharged?: (em: EntityManager, charged: number) => Promise<void>,
  ): Promise<Charge> {
    return this.dataSource.transaction(async (em) => {
      const credits = await this.lockBalance(em, userId);
      if (reference !== undefined) {
        const previous: Array<{ delta: string }> = await em.query(
          'SELECT delta FROM credit_ledger WHERE reference = $1',
          [reference],
        );
        if (previous[0] !== undefined) {
          return { charged: -Number(previous[0].delta), balance: credits };
        }
      }
      const charged = Math.min(amount, credits);
      const balance = await this.record(em, userId, credits, -charged, reason, reference);
      await onCharged?.(em, charged);
      return { charged, balance };
    });
  }

  /** Adds (or with a negative delta, removes) credits, refusing to go below zero. */
  async adjust(userId: string, delta: number, reason: string, reference?: string, em?: EntityManager): Promise<number> {
    const run = async (tx: EntityManager): Promise<number> => {
      const credits = await this.lockBalance(tx, userId);
      if (credits + delta < 0) {
        throw new AppError('NO_CREDITS', 'Insufficient credit balance');
      }
      return this.record(tx, userId, credits, delta, reason, reference);
    };
    return em ? run(em) : this.dataSource.transaction(run);
  }

  private async lockBalance(em: EntityManager, userId: string): Promise<number> {
    const rows: Array<{ credits: string }> = await em.query('SELECT credits FROM users WHERE id = $1 FOR UPDATE', [
      userId,
    ]);
    if (rows[0] === undefined) {
      throw new AppError('NOT_FOUND', 'No user with this id');
    }
    return Number(rows[0].credits);
  }

  private async record(
    em: EntityManager,
    userId: string,
    credits: number,
    delta: number,
    reason: string,
    reference?: string,
  ): Promise<number> {
    const balance = credits + delta;
    await em.query(
      'INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) VALUES ($1, $2, $3, $4, $5)',
      [userId, delta, reason, reference ?? null, balance],
    );
    await em.query('UPDATE users SET credits = $2, updated_at = now() WHERE id = $1', [userId, balance]);
    return balance;
  }
}
