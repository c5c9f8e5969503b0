import type { EntityManager } from 'typeorm';
import { CreditHooks, type RunUsage } from '../credit-hooks.js';
import type {
  CreditsRepository,
  HoldAnswer,
  HoldEntry,
  HoldPrelude,
  LedgerRow,
  RunTurnEntry,
} from '../credits.repository.js';

type Used = 'transaction' | 'balance' | 'charge' | 'hold' | 'release' | 'record' | 'recordOpening' | 'page';

/** The statement parts the fake's hooks carry (the fake's charge checks it was given them). */
const FAKE_PART = 'fake part';

/** A transaction handle the fake hands out: never queried (the fake's methods do the work). */
export const FAKE_TRANSACTION = {} as EntityManager;

/**
 * The rows of credits in memory: ledger rows and holds (what CreditsRepository's statements do),
 * and the balances and runs' usage the credit hooks write for their owners (users, runs). The
 * rules are CreditsService's (caps, refusals), but for the charge's, which its one statement decides
 * (the amount or the balance if less; a repeated reference charges nothing): this fake does as that
 * statement does (test/e2e/credits-bound.e2e-spec.ts holds the statement to the same).
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
      chargePart: FAKE_PART,
    });
    hooks.registerRunUsage(FAKE_PART);
    return hooks;
  }

  async transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    this.transactions += 1;
    return work(FAKE_TRANSACTION);
  }

  async balance(userId: string): Promise<number> {
    return this.balances.get(userId) ?? 0;
  }

  async charge(
    entry: { userId: string; amount: number; reason: string; reference: string | null; run: RunTurnEntry | null },
    parts: { balance: string; runUsage: string },
  ): Promise<{ credits: number; charged: number; previous: number | null } | undefined> {
    if (parts.balance !== FAKE_PART || parts.runUsage !== FAKE_PART) {
      throw new Error('the charge was not given the parts its owners registered');
    }
    const credits = this.balances.get(entry.userId);
    if (credits === undefined) {
      return undefined;
    }
    if (entry.reference !== null) {
      if (this.holds.get(entry.reference)?.userId === entry.userId) {
        this.holds.delete(entry.reference);
      }
      const previous = this.ledgerRows.find((r) => r.reference === entry.reference);
      if (previous !== undefined) {
        return { credits, charged: 0, previous: previous.delta };
      }
    }
    const charged = Math.min(entry.amount, credits);
    this.append(entry.userId, -charged, entry.reason, entry.reference, credits - charged);
    this.balances.set(entry.userId, credits - charged);
    if (entry.run !== null) {
      const before = this.runUsage.get(entry.run.runId) ?? { inputTokens: 0, outputTokens: 0, credits: 0 };
      this.runUsage.set(entry.run.runId, {
        inputTokens: before.inputTokens + entry.run.inputTokens,
        outputTokens: before.outputTokens + entry.run.outputTokens,
        credits: before.credits + charged,
      });
    }
    return { credits, charged, previous: null };
  }

  async hold(entry: HoldEntry, prelude?: HoldPrelude): Promise<HoldAnswer> {
    if (prelude !== undefined) {
      throw new Error('FakeCreditsRepository runs no SQL: a hold with a prelude needs PostgreSQL (an e2e suite)');
    }
    const balance = this.balances.get(entry.userId);
    if (balance === undefined) {
      return { decided: undefined, prelude: [] };
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
    return { decided: { balance, held }, prelude: [] };
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
