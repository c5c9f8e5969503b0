import type { EntityManager } from 'typeorm';
import { CreditHooks, type RunUsage } from '../credit-hooks.js';
import type { CreditsRepository, LedgerRow } from '../credits.repository.js';

type Used = 'transaction' | 'balance' | 'chargeLedger' | 'hold' | 'release' | 'record' | 'recordOpening' | 'page';

/** A transaction handle the fake hands out: never queried (the fake's methods do the work). */
export const FAKE_TRANSACTION = {} as EntityManager;

/**
 * The rows of credits in memory: ledger rows and holds (what CreditsRepository's statements do),
 * and the balances and runs' usage the credit hooks write for their owners (users, runs). The
 * rules (caps, refusals, idempotent references) are CreditsService's: this fake only stores.
 */
export class FakeCreditsRepository implements Pick<CreditsRepository, Used> {
  readonly balances = new Map<string, number>();
  readonly holds = new Map<string, { userId: string; amount: number; expiresAt: number }>();
  readonly ledgerRows: Array<LedgerRow & { userId: string }> = [];
  readonly runUsage = new Map<string, RunUsage>();
  transactions = 0;
  now = (): number => Date.now();

  /** The hooks the users and runs features register, over this fake's balances and runs' usage. */
  hooks(): CreditHooks {
    const hooks = new CreditHooks();
    hooks.registerBalances({
      lock: async (_em, userId) => this.balances.get(userId),
      set: async (_em, userId, balance) => {
        this.balances.set(userId, balance);
      },
    });
    hooks.registerRunUsage(async (_em, runId, usage) => {
      const before = this.runUsage.get(runId) ?? { inputTokens: 0, outputTokens: 0, credits: 0 };
      this.runUsage.set(runId, {
        inputTokens: before.inputTokens + usage.inputTokens,
        outputTokens: before.outputTokens + usage.outputTokens,
        credits: before.credits + usage.credits,
      });
    });
    return hooks;
  }

  async transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    this.transactions += 1;
    return work(FAKE_TRANSACTION);
  }

  async balance(userId: string): Promise<number> {
    return this.balances.get(userId) ?? 0;
  }

  async chargeLedger(
    _em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<{ previous: number | null }> {
    if (entry.reference !== null) {
      if (this.holds.get(entry.reference)?.userId === entry.userId) {
        this.holds.delete(entry.reference);
      }
      const previous = this.ledgerRows.find((r) => r.reference === entry.reference);
      if (previous !== undefined) {
        return { previous: previous.delta };
      }
    }
    this.append(entry.userId, entry.delta, entry.reason, entry.reference, entry.balance);
    return { previous: null };
  }

  async hold(entry: {
    userId: string;
    key: string;
    amount: number;
    ttlMs: number;
  }): Promise<{ balance: number; held: number } | undefined> {
    const balance = this.balances.get(entry.userId);
    if (balance === undefined) {
      return undefined;
    }
    const now = this.now();
    let held = 0;
    for (const [k, hold] of this.holds) {
      if (hold.userId !== entry.userId || k === entry.key) {
        continue;
      }
      if (hold.expiresAt <= now) {
        this.holds.delete(k);
      } else {
        held += hold.amount;
      }
    }
    const existing = this.holds.get(entry.key);
    if (balance - held >= entry.amount && (existing === undefined || existing.userId === entry.userId)) {
      this.holds.set(entry.key, { userId: entry.userId, amount: entry.amount, expiresAt: now + entry.ttlMs });
    }
    return { balance, held };
  }

  async release(userId: string, key: string): Promise<void> {
    if (this.holds.get(key)?.userId === userId) {
      this.holds.delete(key);
    }
  }

  async record(
    _em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<void> {
    this.append(entry.userId, entry.delta, entry.reason, entry.reference, entry.balance);
  }

  async recordOpening(_em: EntityManager, entry: { userId: string; credits: number; reason: string }): Promise<void> {
    this.append(entry.userId, entry.credits, entry.reason, null, entry.credits);
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
  }
}
