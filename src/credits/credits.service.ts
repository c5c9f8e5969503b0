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
   * repeated charge (a retried activity) charges nothing twice. With a `run`, a new charge adds its
   * usage to the run in the same transaction. One round trip (the charge_credits function).
   */
  async charge(
    userId: string,
    amount: number,
    reason: string,
    reference?: string,
    run?: { runId: string; inputTokens: number; outputTokens: number },
  ): Promise<Charge> {
    try {
      const rows: Array<{ out_charged: string; out_balance: string }> = await this.dataSource.query(
        'SELECT out_charged, out_balance FROM charge_credits($1, $2, $3, $4, $5, $6, $7)',
        [userId, amount, reason, reference ?? null, run?.runId ?? null, run?.inputTokens ?? 0, run?.outputTokens ?? 0],
      );
      return { charged: Number(rows[0]!.out_charged), balance: Number(rows[0]!.out_balance) };
    } catch (err) {
      if ((err as { code?: string }).code === 'P0002') {
        throw new AppError('NOT_FOUND', 'No user with this id');
      }
      throw err;
    }
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
