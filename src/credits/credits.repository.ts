import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import { preparedStatement } from '../common/database/prepared-statement.js';

/** One row of `credit_ledger`, as the ledger page reads it. */
export interface LedgerRow {
  id: string;
  delta: number;
  reason: string;
  reference: string | null;
  balanceAfter: number;
  createdAt: Date;
}

/** Every chat turn and model turn sends it: parsed and planned once per connection. */
const CHARGE_QUERY = 'SELECT out_charged, out_balance FROM charge_credits($1, $2, $3, $4, $5, $6, $7)';

/** Every model call sends it before the model is called: parsed and planned once per connection. */
const RESERVE_QUERY = 'SELECT out_reserved, out_available FROM reserve_credits($1, $2, $3, $4)';

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
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly caches: CacheInvalidationBus,
  ) {}

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
      preparedStatement('charge_credits', CHARGE_QUERY),
      [userId, amount, reason, reference, run?.runId ?? null, run?.inputTokens ?? 0, run?.outputTokens ?? 0],
    );
    // No drop here: the users trigger's `credits:<id>:<balance>` notification sets the balance of
    // every process's cached user, this one's included, in commit order (a drop would make the
    // next request read the user again: after every chat turn and model turn).
    return { charged: Number(rows[0]!.out_charged), balance: Number(rows[0]!.out_balance) };
  }

  /**
   * The reserve_credits function: holds `amount` for the call `key` when the balance less the other
   * unexpired holds covers it, under the user's row lock (so concurrent calls are decided one after
   * the other). Rejects with the driver's error (code P0002 when there is no such user).
   */
  async reserve(
    userId: string,
    key: string,
    amount: number,
    ttlMs: number,
  ): Promise<{ reserved: boolean; available: number }> {
    const rows: Array<{ out_reserved: boolean; out_available: string }> = await this.dataSource.query(
      preparedStatement('reserve_credits', RESERVE_QUERY),
      [userId, key, amount, ttlMs],
    );
    return { reserved: rows[0]!.out_reserved, available: Number(rows[0]!.out_available) };
  }

  /** Drops the hold of a call that ended without a charge (the model call failed). */
  async release(userId: string, key: string): Promise<void> {
    await this.dataSource.query('DELETE FROM credit_holds WHERE key = $1 AND user_id = $2', [key, userId]);
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
    this.caches.dropLocal('user', entry.userId);
  }

  /** A grant already in the balance (a registration's opening credits): its ledger row only, in `em`'s transaction. */
  async recordOpening(em: EntityManager, entry: { userId: string; credits: number; reason: string }): Promise<void> {
    await em.query('INSERT INTO credit_ledger (user_id, delta, reason, balance_after) VALUES ($1, $2, $3, $2)', [
      entry.userId,
      entry.credits,
      entry.reason,
    ]);
  }

  /**
   * The user's ledger, newest first: rows with an id below `beforeId` (the keyset; ids only grow),
   * one more than `limit` to tell a next page. The (user_id, id) index serves it.
   */
  async page(userId: string, limit: number, beforeId: string | undefined): Promise<LedgerRow[]> {
    const rows: Array<{
      id: string;
      delta: string;
      reason: string;
      reference: string | null;
      balance_after: string;
      created_at: Date;
    }> = await this.dataSource.query(
      `SELECT id, delta, reason, reference, balance_after, created_at FROM credit_ledger
        WHERE user_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
        ORDER BY id DESC LIMIT $3`,
      [userId, beforeId ?? null, limit + 1],
    );
    return rows.map((r) => ({
      id: String(r.id),
      delta: Number(r.delta),
      reason: r.reason,
      reference: r.reference,
      balanceAfter: Number(r.balance_after),
      createdAt: r.created_at,
    }));
  }
}
