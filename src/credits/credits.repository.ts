import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
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

/**
 * A charge's own rows, under the balance's row lock (taken by the statement before it, so this one's
 * snapshot sees every charge committed before): releases the hold of the reference, finds a charge
 * already made with it (a retried call: `previous` is its delta), and writes the ledger row only
 * when there is none. Every chat turn and model turn sends it: parsed and planned once per connection.
 */
const CHARGE_LEDGER_QUERY =
  'WITH released AS (DELETE FROM credit_holds WHERE key = $4 AND user_id = $1), ' +
  'previous AS (SELECT delta FROM credit_ledger WHERE reference = $4 LIMIT 1), ' +
  'inserted AS (INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) ' +
  'SELECT $1::uuid, $2::bigint, $3::text, $4::text, $5::bigint WHERE NOT EXISTS (SELECT 1 FROM previous)) ' +
  'SELECT (SELECT delta FROM previous) AS previous';

/**
 * A hold's rows, under the balance's row lock: drops the user's expired holds (but the one of this
 * key, which the upsert renews), sums the unexpired holds of the other keys, and writes (or renews,
 * for a retried call with the same key) this key's hold when `$5` (the balance) less that sum covers
 * `$3`; a key another user holds is left as it is. Answers the sum. Every model call sends it before
 * the model is called: parsed and planned once per connection.
 */
const RESERVE_QUERY =
  'WITH expired AS (DELETE FROM credit_holds WHERE user_id = $1 AND expires_at <= now() AND key <> $2), ' +
  'held AS (SELECT coalesce(sum(amount), 0)::bigint AS n FROM credit_holds ' +
  'WHERE user_id = $1 AND key <> $2 AND expires_at > now()), ' +
  'hold AS (INSERT INTO credit_holds (key, user_id, amount, expires_at) ' +
  "SELECT $2::text, $1::uuid, $3::bigint, now() + $4::bigint * interval '1 millisecond' FROM held WHERE $5::bigint - held.n >= $3::bigint " +
  'ON CONFLICT (key) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at ' +
  'WHERE credit_holds.user_id = $1) ' +
  'SELECT n FROM held';

/**
 * The SQL of credit rows: the ledger (`credit_ledger`) and the holds of calls in flight
 * (`credit_holds`), raw statements. The balance they go with (`users.credits`) belongs to the users
 * feature (CreditHooks); CreditsService takes the balance's row lock and runs these in its
 * transaction. Writes take the caller's transaction.
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
   * A charge's ledger row (`delta`, negative, and the balance after it) unless a charge with the same
   * reference was made already (then its delta, and nothing written); releases the reference's hold
   * either way. In `em`'s transaction, which holds the balance's row lock.
   */
  async chargeLedger(
    em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<{ previous: number | null }> {
    const rows: Array<{ previous: string | null }> = await em.query(
      preparedStatement('credits_charge_ledger', CHARGE_LEDGER_QUERY),
      [entry.userId, entry.delta, entry.reason, entry.reference, entry.balance],
    );
    const previous = rows[0]?.previous ?? null;
    return { previous: previous === null ? null : Number(previous) };
  }

  /**
   * Holds `amount` for the call `key` when `balance` less the other unexpired holds covers it; answers
   * what those other holds sum to. In `em`'s transaction, which holds the balance's row lock (so
   * concurrent calls are decided one after the other).
   */
  async hold(
    em: EntityManager,
    entry: { userId: string; key: string; amount: number; ttlMs: number; balance: number },
  ): Promise<{ held: number }> {
    const rows: Array<{ n: string }> = await em.query(preparedStatement('credits_reserve', RESERVE_QUERY), [
      entry.userId,
      entry.key,
      entry.amount,
      entry.ttlMs,
      entry.balance,
    ]);
    return { held: Number(rows[0]!.n) };
  }

  /** Drops the hold of a call that ended without a charge (the model call failed). */
  async release(userId: string, key: string): Promise<void> {
    await this.dataSource.query('DELETE FROM credit_holds WHERE key = $1 AND user_id = $2', [key, userId]);
  }

  /** A ledger row (the caller sets the balance, under the row lock, in `em`'s transaction). */
  async record(
    em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<void> {
    await em.query(
      'INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) VALUES ($1, $2, $3, $4, $5)',
      [entry.userId, entry.delta, entry.reason, entry.reference, entry.balance],
    );
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
