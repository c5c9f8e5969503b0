import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';

/** A charge as the charge_credits function answered it; null when the user does not exist. */
export interface ChargeRow {
  charged: number;
  balance: number;
}

/**
 * The SQL of credit balances (`users.credits`) and their ledger (`credit_ledger`): raw statements,
 * for the row lock and the one-round-trip charge function. Writes take the caller's transaction.
 */
@Injectable()
export class CreditsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in a new transaction. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** The user's balance; 0 when there is no such user. */
  async balance(userId: string): Promise<number> {
    const rows: Array<{ credits: string }> = await this.dataSource.query('SELECT credits FROM users WHERE id = $1', [
      userId,
    ]);
    return Number(rows[0]?.credits ?? 0);
  }

  /**
   * The charge_credits function: one round trip. Rejects with the driver's error (code P0002 when
   * there is no such user).
   */
  async charge(
    userId: string,
    amount: number,
    reason: string,
    reference: string | null,
    run: { runId: string; inputTokens: number; outputTokens: number } | undefined,
  ): Promise<ChargeRow> {
    const rows: Array<{ out_charged: string; out_balance: string }> = await this.dataSource.query(
      'SELECT out_charged, out_balance FROM charge_credits($1, $2, $3, $4, $5, $6, $7)',
      [userId, amount, reason, reference, run?.runId ?? null, run?.inputTokens ?? 0, run?.outputTokens ?? 0],
    );
    return { charged: Number(rows[0]!.out_charged), balance: Number(rows[0]!.out_balance) };
  }

  /** The user's balance under a row lock held until `em`'s transaction ends; undefined when there is no such user. */
  async lockBalance(em: EntityManager, userId: string): Promise<number | undefined> {
    const rows: Array<{ credits: string }> = await em.query('SELECT credits FROM users WHERE id = $1 FOR UPDATE', [
      userId,
    ]);
    return rows[0] === undefined ? undefined : Number(rows[0].credits);
  }

  /** A ledger row and the new balance, in `em`'s transaction (the caller holds the row lock). */
  async record(
    em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<void> {
    await em.query(
      'INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) VALUES ($1, $2, $3, $4, $5)',
      [entry.userId, entry.delta, entry.reason, entry.reference, entry.balance],
    );
    await em.query('UPDATE users SET credits = $2, updated_at = now() WHERE id = $1', [entry.userId, entry.balance]);
  }
}
