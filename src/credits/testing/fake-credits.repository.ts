import type { EntityManager } from 'typeorm';
import type { ChargeRow, CreditsRepository, LedgerRow } from '../credits.repository.js';

type Used =
  'transaction' | 'balance' | 'charge' | 'reserve' | 'release' | 'lockBalance' | 'record' | 'recordOpening' | 'page';

/** The error the database raises for a user that does not exist (PL/pgSQL no_data_found). */
function noSuchUser(userId: string): Error {
  return Object.assign(new Error(`no user ${userId}`), { code: 'P0002' });
}

/** A transaction handle the fake hands out: never queried (the fake's methods do the work). */
export const FAKE_TRANSACTION = {} as EntityManager;

/**
 * Balances, holds and the ledger in memory, with the rules charge_credits and reserve_credits
 * enforce: a charge takes at most the balance, a repeated reference charges nothing twice and
 * releases its hold; a hold is granted when the balance less the other unexpired holds covers it.
 */
export class FakeCreditsRepository implements Pick<CreditsRepository, Used> {
  readonly balances = new Map<string, number>();
  readonly holds = new Map<string, { userId: string; amount: number; expiresAt: number }>();
  readonly ledgerRows: Array<LedgerRow & { userId: string }> = [];
  transactions = 0;
  now = (): number => Date.now();

  async transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    this.transactions += 1;
    return work(FAKE_TRANSACTION);
  }

  async balance(userId: string): Promise<number> {
    return this.balances.get(userId) ?? 0;
  }

  async charge(
    userId: string,
    amount: number,
    reason: string,
    reference: string | null,
    _run: { runId: string; inputTokens: number; outputTokens: number } | undefined,
  ): Promise<ChargeRow> {
    const credits = this.balances.get(userId);
    if (credits === undefined) {
      throw noSuchUser(userId);
    }
    if (reference !== null) {
      this.holds.delete(reference);
      const previous = this.ledgerRows.find((r) => r.reference === reference);
      if (previous !== undefined) {
        return { charged: -previous.delta, balance: credits };
      }
    }
    const charged = Math.min(amount, credits);
    this.append(userId, -charged, reason, reference, credits - charged);
    return { charged, balance: credits - charged };
  }

  async reserve(
    userId: string,
    key: string,
    amount: number,
    ttlMs: number,
  ): Promise<{ reserved: boolean; available: number }> {
    const credits = this.balances.get(userId);
    if (credits === undefined) {
      throw noSuchUser(userId);
    }
    const now = this.now();
    let held = 0;
    for (const [k, hold] of this.holds) {
      if (hold.expiresAt <= now) {
        this.holds.delete(k);
      } else if (hold.userId === userId && k !== key) {
        held += hold.amount;
      }
    }
    if (credits - held < amount) {
      return { reserved: false, available: Math.max(credits - held, 0) };
    }
    this.holds.set(key, { userId, amount, expiresAt: now + ttlMs });
    return { reserved: true, available: credits - held - amount };
  }

  async release(userId: string, key: string): Promise<void> {
    if (this.holds.get(key)?.userId === userId) {
      this.holds.delete(key);
    }
  }

  async lockBalance(_em: EntityManager, userId: string): Promise<number | undefined> {
    return this.balances.get(userId);
  }

  async record(
    _em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<void> {
    this.append(entry.userId, entry.delta, entry.reason, entry.reference, entry.balance);
  }

  async recordOpening(_em: EntityManager, entry: { userId: string; credits: number; reason: string }): Promise<void> {
    this.ledgerRows.push({
      id: String(this.ledgerRows.length + 1),
      userId: entry.userId,
      delta: entry.credits,
      reason: entry.reason,
      reference: null,
      balanceAfter: entry.credits,
      createdAt: new Date(this.now()),
    });
  }

  async page(userId: string, limit: number, beforeId: string | undefined): Promise<LedgerRow[]> {
    return this.ledgerRows
      .filter((r) => r.userId === userId && (beforeId === undefined || Number(r.id) < Number(beforeId)))
      .sort((a, b) => Number(b.id) - Number(a.id))
      .slice(0, limit + 1);
  }

  private append(userId: string, delta: number, reason: string, reference: string | null, balance: number): void {
    this.ledgerRows.push({
      id: String(this.ledgerRows.length + 1),
      userId,
      delta,
      reason,
      reference,
      balanceAfter: balance,
      createdAt: new Date(this.now()),
    });
    this.balances.set(userId, balance);
  }
}
